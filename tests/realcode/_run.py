"""Each port run as written three ways, with the harness of tests/test_corpus.py.

(a) uninterrupted, driven as a plain coroutine (no engine): the reference;
(b) ``m = Machine.set(m.get())`` at every suspension before it is answered;
(c) a blob taken at EVERY suspension of one Machine (which carries on after each ``get()``), each
    restored and finished in a fresh interpreter: one ``tests.corpus.restore_worker`` process for
    every blob of every port (a worker that dies is replaced for the rest).

A port's verdict is ``exact`` when (b), the carrying-on machine and every fresh-process restore
give the reference's outcome and the reference's remaining payloads; ``refused ARxxx`` when
``Machine.get()`` raises ``CannotCrossAwait`` with that code (at the first such suspension);
anything else is ``differs: ...`` -- a bug.

Every run starts under an empty ``contextvars.Context``, as a host's task does, so a context
variable one port sets cannot leak into the next run.  Mode (b) steps one chain under one context,
so only (c) can show a context variable that the checkpoint does not carry.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.corpus import protocol
from tests.corpus.harness import (
    HarnessError,
    Outcome,
    compare_outcomes,
    deep_equal,
    run_checkpoint_every,
    run_direct,
    run_machine,
    show,
)
from tests.realcode import PORTS
from tests.realcode._driver import respond

SUITE = {"suite": "tests.realcode", "responder": "tests.realcode._driver:respond"}


#: what a host has in its environment: the SDK clients a blob reopens read their keys from it
API_KEYS = {
    "OPENAI_API_KEY": "sk-realcode-test-never-sent",
    "ANTHROPIC_API_KEY": "sk-ant-realcode-never-sent",
}


@contextlib.contextmanager
def api_keys() -> Iterator[None]:
    """The API keys in ``os.environ`` (for this process and the workers it starts), then as before."""
    saved = {name: os.environ.get(name) for name in API_KEYS}
    os.environ.update({name: os.environ.get(name) or value for name, value in API_KEYS.items()})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def direct(port: Any) -> Outcome:
    """Mode (a): one uninterrupted run, under a context of its own, with the API keys set."""
    with api_keys():
        return contextvars.Context().run(run_direct, port, respond)


@functools.cache
def _reference(name: str) -> Outcome:
    return direct(next(p for p in PORTS if p.name == name))


def reference(port: Any) -> Outcome:
    return _reference(port.name)


def refusal_code(exc: BaseException) -> str | None:
    """The hazard code of a ``CannotCrossAwait`` raised by ``get()`` (wrapped or not), or None."""
    while exc is not None:
        if type(exc).__name__ == "CannotCrossAwait":
            return exc.code  # type: ignore[attr-defined]
        exc = exc.__cause__  # type: ignore[assignment]
    return None


def every_suspension(port: Any) -> str:
    """Mode (b)'s verdict."""
    ref = reference(port)
    try:
        with api_keys():
            got = contextvars.Context().run(run_checkpoint_every, port, respond)
    except HarnessError as exc:
        code = refusal_code(exc)
        return f"refused {code}" if code else f"differs: {exc}"
    problems = compare_outcomes(ref, got)
    return "exact" if not problems else "differs: " + "; ".join(problems)


def make_blobs(port: Any, directory: Path, manifest: list) -> dict:
    """Run ``port`` on one Machine, taking a blob at every suspension and carrying on."""
    info: dict[str, Any] = {"written": [], "refused": None, "errors": [], "continued": None}

    def checkpoint(machine: Any, payload: Any, k: int) -> Any:
        if info["refused"] or info["errors"]:
            return machine
        try:
            blob = machine.get()
        except Exception as exc:
            code = refusal_code(exc)
            if code:
                info["refused"] = f"refused {code}"
            else:
                info["errors"].append(f"get() at suspension {k} raised {type(exc).__name__}: {exc}")
            return machine
        filename = f"{len(manifest):04d}-{port.name}-k{k}.blob"
        (directory / filename).write_bytes(blob)
        manifest.append({"case": port.name, "k": k, "blob": filename})
        info["written"].append(k)
        return machine

    try:
        info["continued"] = contextvars.Context().run(
            run_machine, port, before_answer=checkpoint, responder=respond
        )
    except Exception as exc:
        info["errors"].append(f"running the original machine failed: {type(exc).__name__}: {exc}")
    return info


def fresh_process(directory: Path) -> dict:
    """Blobs of every port at every suspension, restored by one worker: ``{name: info}`` plus
    ``results`` (``"<port>@<k>"`` -> ``{"pending", "outcome"}`` or ``{"error"}``)."""
    from tests.test_corpus import _run_workers

    manifest: list = []
    with api_keys():
        generated = {port.name: make_blobs(port, directory, manifest) for port in PORTS}
        gc.collect()
        return {"generated": generated, "results": _run_workers(directory, manifest, SUITE)}


def fresh_verdict(port: Any, fresh: dict) -> str:
    """Mode (c)'s verdict, from ``fresh_process``'s result."""
    ref = reference(port)
    gen = fresh["generated"][port.name]
    problems = list(gen["errors"])
    if gen["continued"] is not None:
        problems += [f"carrying on after get(): {p}" for p in compare_outcomes(ref, gen["continued"])]
    for k in gen["written"]:
        res = fresh["results"].get(f"{port.name}@{k}")
        where = f"fresh process at suspension {k}/{len(ref.payloads)}"
        if res is None:
            problems.append(f"{where}: the worker produced no result")
        elif "error" in res:
            problems.append(f"{where}: {res['error']}")
        else:
            if k > len(ref.payloads) or not deep_equal(res["pending"], ref.payloads[k - 1]):
                problems.append(
                    f"{where}: pending {show(res['pending'])} != {show(ref.payloads[k - 1 :][:1])}"
                )
            problems += [f"{where}: {p}" for p in compare_outcomes(ref, res["outcome"], k - 1)]
    if problems:
        return "differs: " + "\n".join(problems)  # the first line says where, the rest what
    return gen["refused"] or "exact"


def engine_error() -> str | None:
    return protocol.ENGINE_IMPORT_ERROR
