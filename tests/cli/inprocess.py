"""Run ``agentrt ARGS`` inside the test process, as if it were a fresh ``python -m agentrt``.

Starting an interpreter and importing agentrt costs far more than most commands, so the CLI
tests call :func:`agentrt.cli.main` here instead.  For the answer to be the one a user gets,
each call sees what a new process would see, and the test process gets its state back after:

* ``os.environ`` is exactly the given environment, the working directory is ``cwd``, and
  ``sys.path`` is that of a new interpreter (``cwd``, then ``$PYTHONPATH``, then the
  interpreter's own entries), so an agent spec resolves to the same module name;
* the test's own modules (anything that is not the standard library, an installed package or
  agentrt) are out of ``sys.modules`` during the call: an agent file edited between two calls,
  or a module the test imported itself, is imported afresh, as a new process would; the ones
  the call imported are dropped afterwards and the test's are put back;
* agentrt's caches that a new process starts without (the key caches, migrations registered by
  the agent's modules) are reset, and ``PYTHONDONTWRITEBYTECODE`` is honoured;
* warnings and log records are filtered and handled as a new interpreter would (printed on its
  stderr), not as the test run does;
* stdout and stderr are captured as text; ``SystemExit`` (argparse) gives the exit status, and
  an exception escaping ``main`` is printed as a traceback with status 1, as the interpreter does.

Calls run one at a time: while one runs, the process's environment, directory and modules are
the call's, for every thread of the test.  What cannot be faithful this way stays a subprocess
(``cli(..., subprocess=True)``, ``popen``): commands that wait for a signal (``worker``,
``serve``), crashes and kills, cold start, commands racing each other, and the example scripts.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import importlib
import io
import json
import linecache
import logging
import os
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TextIO

from tests.garbage import collected

__all__ = ["run_in_process"]

#: One call at a time: a call owns the process's environment, directory and modules while it runs.
_LOCK = threading.RLock()
_AGENTRT = str(Path(__file__).resolve().parents[2] / "agentrt") + os.sep


@functools.cache
def _interpreter_path() -> tuple[str, ...]:
    """``sys.path`` of a new interpreter without ``$PYTHONPATH`` and without its first entry
    (the script's directory or the working directory): the standard library and site-packages."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", "import sys, json; print(json.dumps(sys.path[1:]))"],
        env=env, cwd="/", capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return tuple(json.loads(out.stdout))


def _fresh_path(env: Mapping[str, str], cwd: str) -> list[str]:
    """What ``python -m`` puts on ``sys.path`` in ``cwd`` with ``env``."""
    extra = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return list(dict.fromkeys([cwd, *extra, *_interpreter_path()]))


def _is_own(module: ModuleType | None) -> bool:
    """Whether a new process would have to import ``module`` from the test's files (a test
    module, an agent in a temporary directory, an example) rather than share it with this one."""
    file = getattr(module, "__file__", None)
    if file is None:
        paths = list(getattr(module, "__path__", None) or [])  # a namespace package
        if not paths:
            return False  # built in or frozen
        file = paths[0]
    file = os.path.abspath(file)
    return not file.startswith(_AGENTRT) and not file.startswith(_installed_roots())


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    """The directories of the standard library and the installed packages."""
    return tuple(os.path.abspath(p) + os.sep for p in _interpreter_path() if os.path.isdir(p))


def _drop(name: str) -> None:
    """Take ``name`` out of ``sys.modules`` and out of its parent package's attributes, so that
    ``from package import name`` imports it again too."""
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    package = sys.modules.get(parent)
    if parent and package is not None and package.__dict__.get(child) is not None:
        with contextlib.suppress(AttributeError):
            delattr(package, child)


def _reset_agentrt_caches() -> list[object] | None:
    """Forget what agentrt remembers per process; returns the migrations to restore afterwards."""
    keys = sys.modules.get("agentrt.keys")
    if keys is not None:
        for cache in (keys._ENV_CACHE, keys._FILE_CACHE, keys._PROJECT_CACHE):
            cache.clear()
    registry = sys.modules.get("agentrt._upgrade._registry")
    return list(registry._MIGRATIONS) if registry is not None else None


def _restore_agentrt_caches(migrations: list[object] | None) -> None:
    registry = sys.modules.get("agentrt._upgrade._registry")
    if registry is not None:
        registry._MIGRATIONS[:] = migrations or []


@contextlib.contextmanager
def _fresh_process(env: Mapping[str, str], cwd: str) -> Iterator[None]:
    saved_environ = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_path = list(sys.path)
    saved_meta_path = list(sys.meta_path)
    saved_bytecode = sys.dont_write_bytecode
    saved_modules = dict(sys.modules)
    own = [name for name, module in saved_modules.items() if name != "__main__" and _is_own(module)]
    migrations = _reset_agentrt_caches()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.path[:] = _fresh_path(env, os.getcwd())
        # pytest's assertion rewriter imports test files its own way; a new process does not have it
        sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_pytest")]
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        for name in own:
            _drop(name)
        importlib.invalidate_caches()
        linecache.clearcache()
        yield
    finally:
        for name, module in list(sys.modules.items()):
            if name not in saved_modules and _is_own(module):
                _drop(name)
        sys.modules.update({name: saved_modules[name] for name in own})
        for name in own:  # the parent packages' attributes, as they were
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and child not in sys.modules[parent].__dict__:
                setattr(sys.modules[parent], child, saved_modules[name])
        _restore_agentrt_caches(migrations)
        sys.dont_write_bytecode = saved_bytecode
        sys.meta_path[:] = saved_meta_path
        sys.path[:] = saved_path
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environ)
        importlib.invalidate_caches()


def _exit_status(code: object) -> tuple[int, str]:
    """The status and stderr text of ``SystemExit(code)``, as the interpreter turns it into an exit."""
    if code is None:
        return 0, ""
    if isinstance(code, int):
        return code & 0xFF, ""
    return 1, f"{code}\n"


@contextlib.contextmanager
def _fresh_warnings() -> Iterator[None]:
    """The warning filters of a new interpreter (no ``-W``), not the test run's "error": a
    deprecation inside an installed package, or a file an agent leaves open, is not the test's
    failure there.  ``AGENTRT_TEST_LEAKS=1`` makes what a call leaves unclosed an error of the
    test that made the call, to hunt for leaks of the commands themselves."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning):
            warnings.simplefilter("ignore", category)
        leaks = os.environ.get("AGENTRT_TEST_LEAKS", "") not in ("", "0")
        warnings.simplefilter("error" if leaks else "ignore", ResourceWarning)
        warnings.showwarning = _print_warning  # not into pytest's record of the test's warnings
        yield


def _print_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning on stderr, as the interpreter prints one."""
    with contextlib.suppress(OSError):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _fresh_logging() -> Iterator[None]:
    """The root logger of a new interpreter: no handlers (pytest's capture ones are set aside), so
    that a warning logged by agentrt goes to stderr through ``logging.lastResort``, as it would."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers[:] = []
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _call(args: Sequence[str], env: Mapping[str, str], cwd: str) -> subprocess.CompletedProcess[str]:
    from agentrt.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        _LOCK,
        _fresh_warnings(),
        collected(),
        _fresh_logging(),
        _fresh_process(env, cwd),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(list(args)) & 0xFF
        except SystemExit as exc:
            code, text = _exit_status(exc.code)
            err.write(text)
        except Exception:
            traceback.print_exc()
            code = 1
    command = [sys.executable, "-m", "agentrt", *args]
    return subprocess.CompletedProcess(command, code, out.getvalue(), err.getvalue())


def run_in_process(
    args: Sequence[str], env: Mapping[str, str], cwd: str | os.PathLike[str]
) -> subprocess.CompletedProcess[str]:
    """``agentrt ARGS`` in this process: a ``CompletedProcess`` with the exit status and the text
    of stdout and stderr.  From inside a running event loop (``main`` runs its own) it runs in a
    thread of its own, the loop's thread waiting for it, as it would for a subprocess."""
    try:
        import asyncio

        asyncio.get_running_loop()
    except RuntimeError:
        return _call(args, env, os.fspath(cwd))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(_call, args, env, os.fspath(cwd)).result()
