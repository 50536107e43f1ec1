"""Every construct of the reference documents (000, 001), as a runnable example
(tests/validate/constructs/), checked three ways:

* statically: the example's findings carry exactly the codes its header documents
  ("works natively" examples without a code have no finding at all);
* at run time: driven through a Machine that checkpoints and restores at every
  suspension, it completes, or fails with the documented error and code;
* exactly: an example that completes returns the same value (``repr``) as an
  uninterrupted run when its first checkpoint is restored and finished in a fresh
  process (``_resume_worker``), checkpointing and restoring at every later await;
* in the docs: docs/constructs.md lists the example with the same codes.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrt import CannotCrossAwait
from agentrt.exceptions import ForeignAwaitable
from agentrt.validate import ERROR, check_file
from tests.garbage import collected
from tests.validate.constructs._drive import FirstSuspension, driving

ROOT = Path(__file__).resolve().parents[2]
CONSTRUCTS = Path(__file__).parent / "constructs"
EXAMPLES = sorted(p for p in CONSTRUCTS.glob("*.py") if not p.name.startswith("_"))
DOC = ROOT / "docs" / "constructs.md"
STATUSES = ("works natively", "reported", "does not apply in Python", "runtime only (AR110)")


def header(path: Path) -> dict[str, str]:
    fields = dict(re.findall(r"^# (construct|source|status|expect|runtime): (.+)$", path.read_text(), re.M))
    assert set(fields) == {"construct", "source", "status", "expect", "runtime"}, (
        f"{path.name}: header {fields}"
    )
    return fields


def expected_codes(path: Path) -> set[str]:
    expect = header(path)["expect"]
    return set() if expect == "none" else set(re.findall(r"AR\d{3}", expect))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_static_codes_are_the_documented_ones(path: Path) -> None:
    findings = check_file(path)
    assert {f.code for f in findings} == expected_codes(path), "\n".join(f.message for f in findings)
    status = header(path)["status"]
    assert status in STATUSES
    if status != "reported":
        assert not [f for f in findings if f.severity == ERROR], "a working construct has an error finding"
    else:
        assert any(f.severity == ERROR for f in findings)


def _outcome(path: Path) -> str:
    module = importlib.import_module(f"tests.validate.constructs.{path.stem}")
    with collected():  # finalize abandoned chains now, not inside a later test
        try:
            module.main()
        except CannotCrossAwait as error:
            return f"CannotCrossAwait {error.code}"
        except ForeignAwaitable as error:
            return f"ForeignAwaitable {str(error)[:5]}"
        except TypeError:
            return "TypeError"
    return "completes"


RUNNABLE = [p for p in EXAMPLES if not header(p)["runtime"].startswith("not run")]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.stem)
def test_runtime_behaviour_is_the_documented_one(path: Path) -> None:
    assert _outcome(path) == header(path)["runtime"]


COMPLETING = [p for p in RUNNABLE if header(p)["runtime"] == "completes"]

#: Examples whose first checkpoint needs a module imported before ``Machine.set`` in a fresh
#: process (a module object crosses the await; restoring never imports on its own): the error
#: without it, and the import that makes it resume exactly.  docs/constructs.md says so.
NEEDS_IMPORT = {"native_modules": ("IncompatibleBlob: module 'statistics' is not imported", "statistics")}


@pytest.fixture(scope="module")
def resumed_in_a_fresh_process() -> dict[str, dict[str, str]]:
    """Each completing example's first checkpoint (taken here), finished by one fresh process."""
    jobs = []
    for path in COMPLETING:
        module = importlib.import_module(f"tests.validate.constructs.{path.stem}")
        with collected(), driving("first"):
            try:
                module.main()
            except FirstSuspension as suspended:
                blob = base64.b64encode(suspended.blob).decode()
                jobs.append({"key": path.stem, "name": path.stem, "blob": blob, "imports": []})
                if path.stem in NEEDS_IMPORT:
                    module_name = NEEDS_IMPORT[path.stem][1]
                    key = f"{path.stem}+{module_name}"
                    jobs.append({"key": key, "name": path.stem, "blob": blob, "imports": [module_name]})
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.validate.constructs._resume_worker"],
        input="".join(json.dumps(job) + "\n" for job in jobs),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    return {answer["key"]: answer for answer in answers}


# The first run of each example is abandoned at its checkpoint (the fresh process finishes it), so
# coroutines it holds but has not awaited yet (accumulated requests) are dropped un-awaited.
@pytest.mark.filterwarnings("ignore:coroutine '.*' was never awaited:RuntimeWarning")
@pytest.mark.parametrize("path", COMPLETING, ids=lambda p: p.stem)
def test_a_completing_example_resumes_exactly_in_a_fresh_process(path, resumed_in_a_fresh_process):
    module = importlib.import_module(f"tests.validate.constructs.{path.stem}")
    with driving("straight"):
        uninterrupted = repr(module.main())
    answer = resumed_in_a_fresh_process.get(path.stem)
    if answer is None:  # no await was reached: nothing to restore, and nothing else to compare
        with driving("first"):
            assert repr(module.main()) == uninterrupted
        return
    if path.stem in NEEDS_IMPORT:
        refusal, module_name = NEEDS_IMPORT[path.stem]
        assert answer.get("error", "").startswith(refusal), answer
        answer = resumed_in_a_fresh_process[f"{path.stem}+{module_name}"]
    assert answer.get("error") is None, answer["error"]
    assert answer["result"] == uninterrupted


def _doc_rows() -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("|"):
            for name in re.findall(r"constructs/(\w+)\.py", line):
                rows[name] = line
    return rows


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_docs_list_the_example_with_its_codes(path: Path) -> None:
    rows = _doc_rows()
    assert path.stem in rows, f"docs/constructs.md has no row for {path.name}"
    row = rows[path.stem]
    assert set(re.findall(r"AR\d{3}", row)) >= expected_codes(path), row
    status = header(path)["status"]
    if status == "reported":
        assert "reported" in row.lower(), row
    else:
        assert status.split(" (")[0].lower() in row.lower(), row


def test_docs_code_blocks_are_the_tested_examples() -> None:
    """Every ```python block of docs/constructs.md is an excerpt of an example file."""
    sources = "\n".join(p.read_text(encoding="utf-8") for p in EXAMPLES)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= len(EXAMPLES)
    for block in blocks:
        assert block.strip() in sources, block


def test_every_reference_document_is_covered() -> None:
    sources: set[str] = set()
    for path in EXAMPLES:
        sources |= {s.strip() for s in header(path)["source"].split(",")}
    assert {"000", "001"} <= sources


def _main_result(path: Path) -> Any:
    return importlib.import_module(f"tests.validate.constructs.{path.stem}").main()


@pytest.mark.filterwarnings("ignore")
def test_source_maps_example_points_at_the_agent_line() -> None:
    assert _main_result(CONSTRUCTS / "source_maps.py") == 'agent: raise LookupError("raised after a restore")'
