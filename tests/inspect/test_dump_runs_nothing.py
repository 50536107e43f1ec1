"""``agentrt dump`` renders from the decoded frame records: it builds no frame, primes and runs nothing.

The golden blobs hold chains (a nested await chain, held generators, a plain value);
their dumps must come out exactly as the golden files say while every way of making
or running a frame -- resume code, a new frame object, priming -- raises.  A forged
blob whose awaited slot holds an unstarted coroutine (priming would run its body)
is dumped by the real CLI in a fresh process: it is refused or rendered, and the
coroutine's side effect never happens.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentrt._frames import _engine as _frames  # the engine: what a dump must not call
from agentrt._frames import _plans  # frame shapes: where resume code is synthesized
from tests.cli.helpers import cli
from tests.inspect.golden_tools import BLOBS, REPO, dump_args, golden_dir, normalize, run_cli


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("AGENTRT_BLOB_KEY", raising=False)


def _forbidden(what: str):
    def fail(*args, **kwargs):
        raise AssertionError(f"agentrt dump {what}")

    return fail


@pytest.mark.parametrize("name", BLOBS)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_dump_builds_no_frame_and_primes_nothing(name, fmt, monkeypatch):
    monkeypatch.setattr(_frames, "new_frame_object", _forbidden("made a frame object"))
    monkeypatch.setattr(_plans, "resume_code", _forbidden("synthesized resume code"))
    monkeypatch.setattr(_frames, "_prime_one", _forbidden("primed a restored frame"))
    extra = ("--json",) if fmt == "json" else ()
    code, out, err = run_cli(*dump_args(name, *extra))
    assert code == 0, err
    suffix = "json" if fmt == "json" else "txt"
    assert normalize(out) == (golden_dir() / f"{name}.{suffix}").read_text()


_FORGE = textwrap.dedent(
    """
    import sys
    from agentrt._codec import dumps
    from agentrt.lowlevel import Machine
    from tests.security import agents
    from tests.security.forge import mutated_frames

    out, marker, as_list = sys.argv[1], sys.argv[2], sys.argv[3] == "list"
    m = Machine(agents.plain, marker)
    m.step()
    started = []

    def mutate(code, args, state):
        if code.co_name == "plain":
            state[-1] = agents.touching(marker)  # an unstarted coroutine in the awaited slot
            started.append(state[-1])
        return args, state

    with mutated_frames(mutate):
        blob = dumps([m._coro] if as_list else m._coro, key=b"")
    m.discard()
    for coro in started:
        coro.close()
    with open(out, "wb") as f:
        f.write(blob)
    """
)


@pytest.mark.parametrize("root", ["chain", "list"])
def test_dump_of_hostile_unsigned_blob_runs_nothing(root, tmp_path: Path):
    blob, marker = tmp_path / "hostile.blob", tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": str(REPO), "AGENTRT_KEY_FILE": str(tmp_path / "k")}
    env.pop("AGENTRT_BLOB_KEY", None)
    forged = subprocess.run(
        [sys.executable, "-c", _FORGE, str(blob), str(marker), root],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert forged.returncode == 0, forged.stderr
    assert not marker.exists()
    dump = ["dump", str(blob), "--allow-unsigned", "--allow-module", "tests.security.agents"]
    # a process of its own: a blob that crashed the decoder would end it, not the test run
    proc = cli(*dump, env=env, cwd=REPO, timeout=120, subprocess=True)
    assert not marker.exists(), "agentrt dump ran the coroutine the blob put in the awaited slot"
    assert proc.returncode >= 0, f"dump died ({proc.returncode}): {proc.stderr[-2000:]}"
    if proc.returncode == 0:
        assert "touching" in proc.stdout and "frames cannot be shown" not in proc.stdout, proc.stdout
    else:
        assert "CorruptBlob" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
