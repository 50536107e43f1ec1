"""Differential fuzzer of the checkpoint engine (issue 17): random agents, each run uninterrupted,
with ``Machine.set(m.get())`` at every suspension, and restored from blobs in a fresh process,
compared with the uninterrupted run.  See ``README.md``."""
