"""Run generated agents three ways and compare each with the uninterrupted run.

(a) uninterrupted: the coroutine driven by ``send``/``throw`` (no engine);
(b) ``m = Machine.set(m.get())`` at every suspension;
(c) blobs taken at several suspensions (the original machine carries on and must also
    match), restored and finished by ONE fresh ``python -m tests.fuzz.runner DIR`` process
    per batch.

A refusal (``get()``/``set()`` raising) is a failure too: every generated shape is one
agentrt documents as working.  Its message must still carry a documented AR code, which
the failure report checks.  Results are :class:`Verdict` s; ``category`` is None for a pass.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import re
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.corpus import protocol
from tests.corpus.harness import (
    Outcome,
    compare_outcomes,
    drive,
    finish_restored,
    run_direct,
    show,
    start,
)
from tests.corpus.registry import Case
from tests.fuzz.generator import Agent

REPO = Path(__file__).resolve().parents[2]
HAZARDS = REPO / "docs" / "hazards.md"
MAX_BLOBS = 3  # per agent, for the fresh-process mode (first, middle, last and between)
WORKER_TIMEOUT = 600


def documented_codes() -> set[str]:
    return set(re.findall(r"^\| (AR\d{3}) \|", HAZARDS.read_text(encoding="utf-8"), re.M))


@dataclass
class Verdict:
    seed: int
    category: str | None  # None: passed
    detail: str = ""


class Refused(Exception):
    """get()/set() refused or failed in mode (b)/(c)."""

    def __init__(self, k: int, step: str, exc: BaseException) -> None:
        self.k, self.step, self.exc = k, step, exc
        super().__init__(f"suspension {k}: {step} raised {type(exc).__name__}: {exc}")


def refusal_category(exc: BaseException) -> str:
    from agentrt.exceptions import AgentrtError

    code = getattr(exc, "code", None)
    if not isinstance(code, str):
        found = re.match(r"(AR\d{3})\b", str(exc))
        code = found.group(1) if found else None
    if not isinstance(exc, AgentrtError):
        return f"error:{type(exc).__name__}"
    if code is None:
        return f"refused-without-code:{type(exc).__name__}"
    if code not in documented_codes():
        return f"refused-undocumented-code:{code}"
    return f"refused:{code}"


def module_name(agent: Agent, tag: str = "") -> str:
    return f"fz_{agent.seed}{tag}"


def write_module(agent: Agent, directory: Path, tag: str = "") -> str:
    name = module_name(agent, tag)
    (directory / f"{name}.py").write_text(agent.source(), encoding="utf-8")
    return name


def load(name: str, directory: Path) -> Any:
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def _case(module: Any, agent: Agent) -> Case:
    return Case(module.__name__, module.agent, (agent.param,), {})


def _roundtrip(m: Any, payload: Any, k: int) -> Any:
    try:
        blob = m.get()
    except Exception as exc:
        raise Refused(k, "Machine.get()", exc) from exc
    try:
        restored = protocol.Machine.set(blob)
    except Exception as exc:
        raise Refused(k, "Machine.set()", exc) from exc
    if restored.pending != payload:
        raise Refused(k, "restored.pending", AssertionError(f"{show(restored.pending)} != {show(payload)}"))
    m.discard()
    return restored


def run_in_process(module: Any, agent: Agent, blob_dir: Path | None) -> tuple[Outcome, Verdict | None, list]:
    """Modes (a) and (b), and the blobs of mode (c) (written to ``blob_dir``)."""
    case = _case(module, agent)
    ref = run_direct(case)
    if len(ref.payloads) > 2000:
        return ref, Verdict(agent.seed, None, "skipped: too many suspensions"), []
    # (b)
    m = protocol.Machine(case.fn, *case.args)
    first = start(m)
    try:
        got = first if isinstance(first, Outcome) else drive(m, first, [], _roundtrip)
    except Refused as refused:
        return ref, Verdict(agent.seed, "b:" + refusal_category(refused.exc), str(refused)), []
    problems = compare_outcomes(ref, got)
    if problems:
        return ref, Verdict(agent.seed, "b:mismatch", "\n".join(problems)), []
    # (c): blobs at up to MAX_BLOBS suspensions, the original carrying on
    n = len(ref.payloads)
    wanted = sorted({1, n, *(1 + (i * n) // MAX_BLOBS for i in range(MAX_BLOBS))}) if n else []
    blobs: list[dict] = []

    def take(machine: Any, payload: Any, k: int) -> Any:
        if k in wanted and blob_dir is not None:
            try:
                blob = machine.get()
            except Exception as exc:
                raise Refused(k, "Machine.get()", exc) from exc
            path = blob_dir / f"{module.__name__}@{k}.blob"
            path.write_bytes(blob)
            blobs.append({"module": module.__name__, "k": k, "blob": path.name})
        return machine

    m = protocol.Machine(case.fn, *case.args)
    first = start(m)
    try:
        carried = first if isinstance(first, Outcome) else drive(m, first, [], take)
    except Refused as refused:
        return ref, Verdict(agent.seed, "c:" + refusal_category(refused.exc), str(refused)), []
    problems = compare_outcomes(ref, carried)
    if problems:
        return ref, Verdict(agent.seed, "c:carry-on-mismatch", "\n".join(problems)), []
    return ref, None, blobs


def run_fresh(directory: Path, entries: list[dict], python: str = sys.executable) -> dict[str, Any]:
    """Mode (c): one worker process restores and finishes every blob; a crash costs one blob."""
    results: dict[str, Any] = {}
    remaining = list(entries)
    while remaining:
        (directory / "manifest.json").write_text(json.dumps({"dir": str(directory), "blobs": remaining}))
        out = directory / "results.pickle"
        out.unlink(missing_ok=True)
        env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{directory}"}
        try:
            proc = subprocess.run(
                [python, "-X", "faulthandler", "-m", "tests.fuzz.runner", str(directory)],
                cwd=REPO, env=env, capture_output=True, text=True, timeout=WORKER_TIMEOUT, check=False,
            )  # fmt: skip
            died = proc.returncode != 0
            stderr = proc.stderr[-3000:]
        except subprocess.TimeoutExpired:
            died, stderr = True, "worker timed out"
        if out.exists():
            with open(out, "rb") as f:
                while True:
                    try:
                        key, result = pickle.load(f)
                    except EOFError:
                        break
                    results[key] = result
        remaining = [e for e in remaining if f"{e['module']}@{e['k']}" not in results]
        if remaining and died:
            current = (directory / "current").read_text() if (directory / "current").exists() else ""
            key = current or f"{remaining[0]['module']}@{remaining[0]['k']}"
            results[key] = {"crash": stderr}
            remaining = [e for e in remaining if f"{e['module']}@{e['k']}" != key]
        elif remaining:
            for e in remaining:
                results[f"{e['module']}@{e['k']}"] = {"crash": "worker skipped it: " + stderr}
            break
    return results


def judge_fresh(seed: int, ref: Outcome, entries: list[dict], results: dict[str, Any]) -> Verdict | None:
    for entry in entries:
        key = f"{entry['module']}@{entry['k']}"
        result = results.get(key, {"crash": "no result"})
        if "crash" in result:
            return Verdict(seed, "c:crash", f"blob at suspension {entry['k']}: {result['crash']}")
        if "refused" in result:
            return Verdict(
                seed, "c:" + result["refused"], f"blob at suspension {entry['k']}: {result['message']}"
            )
        if "error" in result:
            return Verdict(seed, "c:error", f"blob at suspension {entry['k']}: {result['error']}")
        k = entry["k"]
        if result["pending"] != ref.payloads[k - 1]:
            return Verdict(
                seed, "c:pending", f"suspension {k}: {show(result['pending'])} != {show(ref.payloads[k - 1])}"
            )
        problems = compare_outcomes(ref, result["outcome"], payloads_from=k - 1)
        if problems:
            return Verdict(
                seed, "c:mismatch", f"restored at suspension {k} in a fresh process:\n" + "\n".join(problems)
            )
    return None


def worker(directory: Path) -> int:
    manifest = json.loads((directory / "manifest.json").read_text())
    sys.path.insert(0, str(directory))
    with open(directory / "results.pickle", "ab") as out:

        def record(key: str, result: dict) -> None:
            try:
                data = pickle.dumps((key, result))
            except Exception as exc:
                data = pickle.dumps((key, {"error": f"result not picklable: {exc!r}"}))
            out.write(data)
            out.flush()

        for entry in manifest["blobs"]:
            key = f"{entry['module']}@{entry['k']}"
            (directory / "current").write_text(key)
            try:
                importlib.import_module(entry["module"])
                blob = (directory / entry["blob"]).read_bytes()
                machine = protocol.Machine.set(blob)
            except Exception as exc:
                record(key, {"refused": refusal_category(exc), "message": f"{type(exc).__name__}: {exc}"})
                continue
            try:
                pending = machine.pending
                outcome = finish_restored(machine)
            except Exception:
                record(key, {"error": traceback.format_exc()})
                continue
            record(key, {"pending": pending, "outcome": outcome})
    (directory / "current").write_text("")
    return 0


if __name__ == "__main__":
    sys.exit(worker(Path(sys.argv[1])))
