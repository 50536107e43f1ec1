"""Every construct of the reference documents (000, 001), as a runnable example
(tests/validate/constructs/), checked three ways:

* statically: the example's findings carry exactly the codes its header documents
  ("works natively" examples without a code have no finding at all);
* at run time: driven through a Machine that checkpoints and restores at every
  suspension, it completes, or fails with the documented error and code;
* in the docs: docs/constructs.md lists the example with the same codes.
"""

from __future__ import annotations

import gc
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from agentrt import CannotCrossAwait
from agentrt.exceptions import ForeignAwaitable
from agentrt.validate import ERROR, check_file

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
    try:
        module.main()
    except CannotCrossAwait as error:
        return f"CannotCrossAwait {error.code}"
    except ForeignAwaitable as error:
        return f"ForeignAwaitable {str(error)[:5]}"
    except TypeError:
        return "TypeError"
    finally:
        gc.collect()  # finalize abandoned chains now, not inside a later test
    return "completes"


RUNNABLE = [p for p in EXAMPLES if not header(p)["runtime"].startswith("not run")]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.stem)
def test_runtime_behaviour_is_the_documented_one(path: Path) -> None:
    assert _outcome(path) == header(path)["runtime"]


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
