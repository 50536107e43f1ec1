"""Each attack class of issue 10 in its own subprocess: a crash is a failed test, not a lost run.

The subprocess (tests/security/attacks.py) builds the hostile blob and hands it to
``Machine.set`` / ``agentrt dump`` / the runtime's checks; it must print ``REFUSED
CorruptBlob`` (or ``IncompatibleBlob``), exit normally (no signal), write no marker
file (no code ran, no ``finally`` ran -- interpreter shutdown included), and report
no files written for the refused blob.  Address space is capped so a memory blowup
fails instead of swapping.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.security.attacks import ATTACKS

REPO = Path(__file__).resolve().parents[2]
_ADDRESS_SPACE_BYTES = 3 * 1024**3


def _limit() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE_BYTES, _ADDRESS_SPACE_BYTES))


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_is_refused_without_crash_or_side_effect(name: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    env = {
        **os.environ,
        "ATTACK_TMP": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "AGENTRT_KEY_FILE": str(tmp_path / "k"),
    }
    env.pop("AGENTRT_ALLOW_UNSIGNED", None)
    env.pop("AGENTRT_BLOB_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.security.attacks", name, str(marker)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        preexec_fn=_limit,
    )
    assert proc.returncode == 0, (
        f"attack {name} killed the interpreter ({proc.returncode}): {proc.stderr[-2000:]}"
    )
    assert proc.stdout.startswith(("REFUSED CorruptBlob", "REFUSED IncompatibleBlob")), (
        proc.stdout + proc.stderr
    )
    assert not marker.exists(), f"attack {name} ran code: {marker} was written"
    assert "SIDE EFFECT" not in proc.stderr, proc.stderr
