"""The structure-aware decoder fuzzer under a CI time budget (tests/security/fuzz_decoder.py).

Runs in a subprocess, so a crash of the interpreter fails this test instead of the
run.  ``AGENTRT_FUZZ_SECONDS`` (default 20) and ``AGENTRT_FUZZ_SEED`` (default: a
fixed seed per interpreter) choose the budget; run longer by hand with
``python -m tests.security.fuzz_decoder SECONDS SEED``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_decoder_fuzzer_only_refuses_with_blob_errors(tmp_path: Path) -> None:
    seconds = os.environ.get("AGENTRT_FUZZ_SECONDS", "20")
    seed = os.environ.get("AGENTRT_FUZZ_SEED", "1013")
    env = {**os.environ, "PYTHONPATH": str(REPO), "AGENTRT_KEY_FILE": str(tmp_path / "key")}
    env.pop("AGENTRT_BLOB_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.security.fuzz_decoder", seconds, seed],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=float(seconds) + 240,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.stdout.startswith("OK "), proc.stdout
    assert " refused=0 " not in proc.stdout, "the fuzzer never produced a refused blob: it tests nothing"
