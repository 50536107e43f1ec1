"""benchmarks/run.py and benchmarks/_env.py (issue 23): what a benchmark run may touch, never a timing.

No ratio is judged here (CI machines are noisy): these check that a timed run cannot install
anything, that results go to the untracked folder unless asked, and that the driver's one table
reads every benchmark's result files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The benchmarks folder importable, as when a script runs from it."""
    monkeypatch.syspath_prepend(str(BENCH))
    yield


def test_results_go_to_the_untracked_folder_unless_told(bench: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import _env

    monkeypatch.delenv(_env.RESULTS_ENV, raising=False)
    assert _env.results_dir() == BENCH / "results" / "local"
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "benchmarks/results/local/step-3.12.json"], cwd=REPO
    )
    if ignored.returncode != 128:  # 128: not a git checkout (an sdist): nothing to check
        assert ignored.returncode == 0, "benchmarks/results/local/ must be git-ignored"


def test_no_install_switch_stops_every_peer_install(
    bench: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import _env
    import checkpoint
    import resume

    monkeypatch.setenv(_env.NO_INSTALL_ENV, "1")
    assert not _env.may_install()
    monkeypatch.setattr(resume, "PEERS_VENV", tmp_path / ".venv-peers")
    assert resume.ensure_peers_venv() == (None, _env.NOT_INSTALLED)
    venv = BENCH / ".venv-test-never-made"
    assert checkpoint.ensure_side_venv(venv, "no_such_module_here", ("no-such-package",)) == (
        None,
        _env.NOT_INSTALLED,
    )
    assert not venv.exists() and not (tmp_path / ".venv-peers").exists()
    monkeypatch.setenv(_env.NO_INSTALL_ENV, "0")
    assert _env.may_install()


def test_update_results_only_with_full() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--update-results"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 2 and "--update-results goes with --full" in proc.stderr


def test_the_table_reads_every_benchmark_s_results(bench: None, tmp_path: Path) -> None:
    """Each benchmark's result file, as its script writes it, gives rows with a verdict (no KeyError)."""
    import run

    py = run.PY
    step_row = {"median_us": 100.0, "q1_us": 90.0, "q3_us": 110.0, "min_us": 80.0, "max_us": 120.0}
    cell = {"median": 0.1, "q1": 0.09, "q3": 0.11, "min": 0.08, "max": 0.12}
    results = {
        f"step-{py}.json": {
            "rows": {
                "bare thread hop": step_row,
                "floor: plain sqlite3 [NORMAL]": step_row,
                "agentrt async tool [NORMAL]": step_row,
            },
            "targets": {"async tool / floor [NORMAL]": {"ratio": 1.0, "target": 2.0, "met": True}},
        },
        f"coldstart-{py}.json": {
            "columns": {"warm": {"agentrt --help": cell, "floor: import asyncio": cell}},
            "targets": {
                "agentrt --help / import asyncio": {
                    "row": "agentrt --help",
                    "floor": "floor: import asyncio",
                    "ratio": 1.0,
                    "target": 1.3,
                    "met": True,
                }
            },
        },
        f"trap-{py}-quick.json": {
            "rows": {
                "agentrt suspend": {"median_ns": 1.0, "min_ns": 1.0, "max_ns": 1.0},
                "floor: @types.coroutine trap": {"median_ns": 1.0, "min_ns": 1.0, "max_ns": 1.0},
            },
            "target": {"ratio": 1.6, "target": 1.5, "met": False},
        },
        f"resume-{py}.json": {
            "durabilities": ["NORMAL"],
            "resume": {"agentrt": {"NORMAL": {"10": {"resume_warm": cell}, "1000": {"resume_warm": cell}}}},
            "agentrt_flatness": {"n_max_over_n_min": 1.0, "limit": 1.5, "ok": True},
            "peers": {"skipped": "peer not installed (make bench installs it)"},
        },
    }
    for name, data in results.items():
        (tmp_path / name).write_text(json.dumps(data))
    ran = [{"name": n, "status": "ok"} for n in ("step", "coldstart", "trap", "resume")]
    ran.append({"name": "llm", "status": "failed (exit 1)"})
    lines = run.table(tmp_path, ran, "quick")
    text = "\n".join(lines)
    assert "durable step, async tool" in text and "start-up: agentrt --help" in text
    assert "MISSED" in text and "peer not installed (make bench installs it)" in text
    assert "llm.py" in text and "error" in text
    assert lines[-1].startswith("3 met, 1 missed")  # step, start-up, resume; the trap
    smoke = "\n".join(run.table(tmp_path, ran, "smoke"))
    assert "MISSED" not in smoke and "not judged (smoke)" in smoke


def test_scripts_accept_the_arguments_the_driver_gives(bench: None) -> None:
    """Every argument in run.MODES parses in its script (``--help`` of each would import agentrt
    and time nothing; the arguments are checked against each script's parser source instead)."""
    import run

    for mode, plan in run.MODES.items():
        for name, args in plan.items():
            source = (BENCH / f"{name}.py").read_text()
            for arg in args:
                if arg.startswith("--"):
                    assert f'"{arg}"' in source, (mode, name, arg)
    assert os.path.exists(BENCH / "summary.py")
