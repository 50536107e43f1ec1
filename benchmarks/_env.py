"""Where a benchmark writes its results, and whether it may install its peers (issue 23).

Two environment variables, set by ``benchmarks/run.py`` (``make bench``, ``bench-quick``,
``bench-smoke``) and honoured by every benchmark script, so a script run by hand behaves the same:

``AGENTRT_BENCH_RESULTS``
    The folder results go to.  Unset: ``benchmarks/results/local/``, which git ignores, so a
    benchmark run never rewrites the committed results in ``benchmarks/results/`` by accident;
    ``run.py --update-results`` points it at ``benchmarks/results/`` on purpose.
``AGENTRT_BENCH_NO_INSTALL``
    When set (to anything but ``""`` or ``0``), no benchmark creates a venv or runs pip: a peer
    whose venv is missing is skipped with :data:`NOT_INSTALLED` as the reason.  ``run.py`` sets
    it for every benchmark it times (``--full`` installs every peer in its set-up phase, before
    any timing), so a run never reaches the network half-way through and a timing never shares
    the machine with a pip install.

Standard library only: the peer venvs (which have no agentrt) import the scripts that import this.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: The committed results (``run.py --update-results`` rewrites them).
COMMITTED = HERE / "results"
#: Where results go unless told otherwise: ignored by git.
LOCAL = COMMITTED / "local"

RESULTS_ENV = "AGENTRT_BENCH_RESULTS"
NO_INSTALL_ENV = "AGENTRT_BENCH_NO_INSTALL"

#: The reason given for a peer that is skipped because its venv does not exist yet.
NOT_INSTALLED = "peer not installed (make bench installs it)"


def results_dir() -> Path:
    """The folder this run's results go to (created)."""
    raw = os.environ.get(RESULTS_ENV)
    path = Path(raw).resolve() if raw else LOCAL
    path.mkdir(parents=True, exist_ok=True)
    return path


def result_name(stem: str, quick: bool) -> str:
    """``<stem>-<python>[-quick].json``: a smoke or quick run never overwrites a full run's result."""
    return f"{stem}-{sys.version_info.major}.{sys.version_info.minor}{'-quick' if quick else ''}.json"


def may_install() -> bool:
    """Whether a benchmark may create a peer venv and pip-install into it now."""
    return os.environ.get(NO_INSTALL_ENV, "") in ("", "0")


def shown(path: Path) -> str:
    """A path as a reader types it from the repository root (absolute when outside it)."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


#: The venvs a plot may be drawn in (matplotlib is never an agentrt dependency); ``run.py --full``
#: installs it into the first of them before timing starts.
PLOT_VENVS = (HERE / ".venv-plot", HERE / ".venv-peers")


def plot_python() -> str | None:
    """An interpreter that imports matplotlib: this one, or a benchmark venv that has it; None."""
    import importlib.util
    import subprocess
    import sys

    if importlib.util.find_spec("matplotlib") is not None:
        return sys.executable
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    for venv in PLOT_VENVS:
        python = venv / "bin" / "python"
        if (
            python.exists()
            and subprocess.run(
                [str(python), "-c", "import matplotlib"], capture_output=True, env=env
            ).returncode
            == 0
        ):
            return str(python)
    return None
