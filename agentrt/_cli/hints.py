"""What to type next: the command-line hints the one error path adds to errors of the Python API.

Errors raised by agentrt speak the API they came through (``Runtime.reply``, ``open_store``);
:func:`cli_hint` says the same in command-line words, for the command that was run, with
absolute paths wherever it can find them, so the command it gives works from any directory.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex

from agentrt.exceptions import (
    AgentSpecError,
    MissingExecutor,
    NotWaiting,
    RunExists,
    RunNotFound,
    StoreCorrupt,
    StoreNotFound,
    StoreSchemaTooNew,
)

__all__ = ["agent_hint", "allow_module_hint", "cli_hint", "cli_message", "find_module_file"]

#: The Python advice at the end of a MissingExecutor message, which a command-line user cannot follow.
_PASS_EXECUTORS = re.compile(r"[;.]? *[Pp]ass Runtime\(executors=.*$", re.DOTALL)
#: The commands that load a stored run's agent by the name it was started with.
_RUN_COMMANDS = ("resume", "retry", "dump", "diff", "fork")


def cli_message(exc: BaseException, args: argparse.Namespace | None = None) -> str | None:
    """The whole message in command-line words, for an error whose own message tells a Python caller
    what to call (``Runtime.runs()``, ``Runtime(executors=...)``); None: its message plus
    :func:`cli_hint`."""
    command = getattr(args, "command", None)
    if isinstance(exc, RunNotFound):
        where = f" in {exc.store}" if exc.store else ""
        blob = " and no blob file of that name" if command == "dump" else ""
        store = getattr(args, "store", None)
        listing = shlex.join(["agentrt", "runs", *(["--store", store] if store else [])])
        return (
            f"no run {exc.run_id!r}{where}{blob}; `{listing}` lists its runs; check that --store "
            "(or AGENTRT_STORE) names the store the run was started in"
        )
    if isinstance(exc, MissingExecutor):
        text, found = _PASS_EXECUTORS.subn("", str(exc))
        if found:
            fix = "give --executors MODULE:ATTR (or set AGENTRT_EXECUTORS)"
            return f"MissingExecutor: {text.rstrip(' .;')}: {fix}"
    return None


def cli_hint(exc: BaseException, args: argparse.Namespace | None = None) -> str:
    """The command-line words added to an error whose message speaks the Python API ("" if none)."""
    command = getattr(args, "command", None)
    if isinstance(exc, AgentSpecError) and exc.missing_module and exc.spec and command in _RUN_COMMANDS:
        return agent_hint(args, exc.spec)
    if isinstance(exc, NotWaiting):
        return " (with the command line: `agentrt show RUN_ID` shows what the run waits on)"
    if isinstance(exc, MissingExecutor):  # a message of its own that names no Runtime(...) to pass
        return " (with the command line: --executors MODULE:ATTR or AGENTRT_EXECUTORS)"
    if isinstance(exc, RunExists):
        return " (with the command line: choose another --run-id)"
    if isinstance(exc, StoreNotFound):
        return (
            " (with the command line: check --store / AGENTRT_STORE, default .agentrt/agentrt.db; "
            "`agentrt run` or `agentrt submit` makes a new store)"
        )
    if isinstance(exc, (StoreSchemaTooNew, StoreCorrupt)):
        return " (with the command line: --store PATH or AGENTRT_STORE names another store)"
    return ""


def agent_hint(args: argparse.Namespace | None, recorded: str) -> str:
    """For a run whose agent module is not importable here: the command, with ``--agent FILE``."""
    module, _, attr = recorded.rpartition(":")
    given = vars(args) if args is not None else {}
    command = given.get("command") or "resume"
    found = find_module_file(module, _places(args))
    target = given.get("run_id") or given.get("target") or "RUN_ID"
    words = ["agentrt", command, target, *_store_words(args)]
    if command == "diff":
        words += [str(given["a"]), str(given["b"])]
    if command in ("dump", "fork") and given.get("seq") is not None:
        words += ["--seq" if command == "dump" else "--at", str(given["seq"])]
    words += ["--agent", f"{found or 'path/to/' + module.replace('.', '/') + '.py'}:{attr}"]
    if command == "resume" and given.get("reply") is not None:
        words += ["--reply", given["reply"]]
    where = "from any directory" if found else f"with the path of {module}'s file"
    return f" (with the command line, {where}: {shlex.join(words)})"


def allow_module_hint(args: argparse.Namespace | None, module: str, blob_file: str | None) -> str:
    """For a blob file naming a module that is not imported: the command that imports it, anywhere."""
    places = _places(args) + ([os.path.dirname(os.path.abspath(blob_file))] if blob_file else [])
    found = find_module_file(module, places)
    target = os.path.abspath(blob_file) if blob_file else getattr(args, "target", "BLOB")
    words = ["agentrt", "dump", target, "--allow-module", module]
    if found is None:
        top = module.split(".")[0]
        return f" (with the command line: PYTHONPATH=DIRECTORY_HOLDING_{top} {shlex.join(words)})"
    root = shlex.quote(_root_of(found, module))
    return f" (with the command line, from any directory: PYTHONPATH={root} {shlex.join(words)})"


def find_module_file(module: str, places: list[str]) -> str | None:
    """The absolute path of ``module``'s file under one of ``places`` (a directory on the path), or None."""
    tail = os.path.join(*module.split("."))
    for place in places:
        for candidate in (tail + ".py", os.path.join(tail, "__init__.py")):
            path = os.path.join(place, candidate)
            if os.path.isfile(path):
                return os.path.abspath(path)
    return None


def _places(args: argparse.Namespace | None) -> list[str]:
    """Where an agent's module probably lives: the current directory, and beside the store (a store
    file in the project, or ``PROJECT/.agentrt/agentrt.db``)."""
    places = [os.getcwd()]
    store = _store_path(args)
    if store is not None:
        directory = os.path.dirname(store)
        places += [directory, os.path.dirname(directory)]
    return list(dict.fromkeys(places))


def _store_path(args: argparse.Namespace | None) -> str | None:
    from agentrt.stores import default_store_location

    location = getattr(args, "store", None) or default_store_location()
    if location.startswith("sqlite:///"):
        location = location[len("sqlite:///") :]
    if "://" in location or location in ("memory", "memory:", ":memory:"):
        return None
    return os.path.abspath(location)


def _store_words(args: argparse.Namespace | None) -> list[str]:
    store = _store_path(args)
    if store is not None:
        return ["--store", store]
    return ["--store", "STORE"] if getattr(args, "store", None) else []


def _root_of(path: str, module: str) -> str:
    """The directory to put on ``sys.path`` so that ``module`` is the file ``path``."""
    root = os.path.dirname(path)
    for _ in range(module.count(".") + (1 if path.endswith("__init__.py") else 0)):
        root = os.path.dirname(root)
    return root
