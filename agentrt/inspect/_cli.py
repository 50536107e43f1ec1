"""``agentrt dump``, ``agentrt diff`` and ``agentrt fork`` (registered by :mod:`agentrt.cli`).

Exit status: 0 done (for ``dump``, also when only the header could be shown: the
output says why the frames cannot be), 1 an error, reported in one line on
stderr without a traceback (unknown run or checkpoint, unreadable file, corrupt
blob, unusable store).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from agentrt._cli.common import add_store_option, fail
from agentrt.exceptions import AgentrtError

__all__ = ["register"]

EXIT_OK = 0
EXIT_ERROR = 1


def register(commands: Any) -> None:
    dump = commands.add_parser(
        "dump",
        help="frame dump of a checkpoint: frames, locals, value stacks, pending request",
        description="Show a checkpoint like a stack in a debugger, outermost frame first, without "
        "running anything: for each frame the function, file:line with context, locals, value-stack "
        "entries and what they are, the exception being handled; then the pending request. ID is a "
        "run id (its latest checkpoint, or --seq N); BLOBFILE a file holding a blob.",
    )
    dump.add_argument("target", metavar="ID|BLOBFILE", help="a run id, or the path of a blob file")
    dump.add_argument(
        "--seq", type=int, metavar="N", default=None, help="checkpoint N of the run (default: latest)"
    )
    dump.add_argument("--json", action="store_true", help="print the dump as one JSON object")
    dump.add_argument("--disasm", action="store_true", help="show the bytecode around each suspension")
    dump.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="decode a blob not signed with this project's or store's key (or AGENTRT_ALLOW_UNSIGNED=1); "
        "it still goes through every safety check",
    )
    _common(dump)
    dump.set_defaults(handler=_guarded(cmd_dump))

    diff = commands.add_parser(
        "diff",
        help="what changed between two checkpoints of a run",
        description="Compare checkpoints A and B of run ID: per frame, where it moved, locals added, "
        "removed and changed (old → new), value-stack changes; and the pending request.",
    )
    diff.add_argument("run_id", metavar="ID")
    diff.add_argument("a", metavar="A", type=int, help="sequence number of the first checkpoint")
    diff.add_argument("b", metavar="B", type=int, help="sequence number of the second checkpoint")
    diff.add_argument("--json", action="store_true", help="print the differences as one JSON object")
    _common(diff)
    diff.set_defaults(handler=_guarded(cmd_diff))

    fork = commands.add_parser(
        "fork",
        help="a new run continuing from an earlier checkpoint of a run",
        description="Create a new run in the same store that continues from checkpoint SEQ of run ID "
        "(same agent and input; the pending request of that checkpoint is dispatched again). "
        "Continue it with `agentrt resume NEW`.",
    )
    fork.add_argument("run_id", metavar="ID")
    fork.add_argument(
        "--at", dest="seq", type=int, metavar="SEQ", required=True, help="the checkpoint to fork"
    )
    fork.add_argument("--run-id", dest="new_run_id", metavar="NEW", default=None, help="id of the new run")
    fork.add_argument("--json", action="store_true", help="print the new run as one JSON object")
    fork.add_argument(
        "--store",
        metavar="S",
        default=None,
        help="store: a SQLite file path (default: $AGENTRT_STORE or .agentrt/agentrt.db)",
    )
    fork.set_defaults(handler=_guarded(cmd_fork))


def _common(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser)
    parser.add_argument(
        "--allow-module",
        dest="allow_modules",
        metavar="MODULE",
        action="append",
        default=[],
        help="import MODULE to decode the blob (repeatable); a run's agent module is imported anyway",
    )


def _fail(message: str) -> int:
    return fail(message, EXIT_ERROR)


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """One line on stderr and exit status 1 for every error; never a traceback."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except KeyboardInterrupt:
            return _fail("interrupted")
        except BrokenPipeError:  # `agentrt dump ID | head`: the reader is gone, say nothing more
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_ERROR
        except AgentrtError as exc:
            name = type(exc).__name__
            text = str(exc)
            return _fail(text if name in ("RunNotFound", "ForkError", "StoreError") else f"{name}: {text}")
        except OSError as exc:
            return _fail(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
        except Exception as exc:  # a bug in the dump must still not print a traceback at a user
            return _fail(f"unexpected {type(exc).__name__}: {exc} (please report this)")

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


# --------------------------------------------------------------------------- loading


def _open_store(args: argparse.Namespace) -> Any:
    try:
        from agentrt.stores import open_store
    except ImportError as exc:  # pragma: no cover - the stores are part of agentrt
        raise AgentrtError(f"the run store is not available in this installation ({exc})") from None
    return open_store(args.store)


def _import_agent_module(spec: str) -> None:
    """Import the module of the run's agent (``MODULE:ATTR``), so its code can be resolved."""
    if spec.startswith("<local>:"):
        return  # not importable by name; the blob's modules must be allowed explicitly
    from agentrt._sdk.agent import load_agent

    load_agent(spec)


def _load_checkpoint(store: Any, run_id: str, seq: int | None) -> tuple[Any, int, bytes, bool]:
    from agentrt._sdk.errors import RunNotFound

    rec = store.get_run(run_id)
    if rec is None:
        raise RunNotFound(run_id, store.location)
    if seq is None:
        latest = store.latest_checkpoint(run_id)
        if latest is None:
            raise AgentrtError(f"run {run_id!r} has no checkpoint yet (it has not reached its first await)")
        return rec, latest[0], latest[1], True
    blob = store.get_checkpoint(run_id, seq)
    if blob is None:
        from agentrt.inspect._fork import _missing_checkpoint

        raise AgentrtError(_missing_checkpoint(store, run_id, seq))
    latest = store.latest_checkpoint(run_id)
    return rec, seq, blob, latest is not None and latest[0] == seq


def _dump_checkpoint(
    store: Any, run_id: str, seq: int | None, allow: list[str], allow_unsigned: bool = False
) -> Any:
    from agentrt.inspect._build import dump_blob
    from agentrt.inspect._model import Source

    rec, seq, blob, latest = _load_checkpoint(store, run_id, seq)
    import_error = None
    try:
        _import_agent_module(rec.agent)
    except AgentrtError as exc:  # the header can still be shown, and why the frames cannot
        import_error = str(exc)
    from agentrt.keys import keyring_for_store

    dump = dump_blob(
        blob,
        Source("run", run_id, seq, latest, agent=rec.agent),
        allow_modules=allow,
        allow_unsigned=allow_unsigned,
        keyring=keyring_for_store(store),
        bind=("checkpoint", run_id, seq),
    )
    if import_error and dump.frames is None:
        import attrs

        dump = attrs.evolve(dump, frames_error=f"{import_error} ({dump.frames_error})")
    return dump


def _looks_like_path(target: str) -> bool:
    return os.sep in target or (os.altsep is not None and os.altsep in target) or target.endswith(".blob")


# --------------------------------------------------------------------------- commands


def cmd_dump(args: argparse.Namespace) -> int:
    from agentrt.inspect._build import dump_blob
    from agentrt.inspect._model import Source
    from agentrt.inspect._render import render_text, to_json

    target = args.target
    if os.path.exists(target) or _looks_like_path(target):
        if args.seq is not None:
            return _fail("--seq selects a checkpoint of a run; it does not apply to a blob file")
        try:
            with open(target, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return _fail(f"cannot read blob file {target!r}: no such file")
        except OSError as exc:
            return _fail(f"cannot read blob file {target!r}: {exc.strerror or exc}")
        _make_cwd_importable()
        dump = dump_blob(
            blob,
            Source("file", path=target),
            allow_modules=args.allow_modules,
            allow_unsigned=args.allow_unsigned,
        )
    else:
        from agentrt._sdk.errors import RunNotFound

        store = _open_store(args)
        try:
            _make_cwd_importable()
            dump = _dump_checkpoint(store, target, args.seq, args.allow_modules, args.allow_unsigned)
        except RunNotFound:
            return _fail(
                f"no run {target!r} in {store.location} and no blob file of that name; "
                "list the runs with `agentrt runs` (and check --store / AGENTRT_STORE)"
            )
        finally:
            store.close()
    dump = _with_cli_hint(dump)
    if args.json:
        print(json.dumps(to_json(dump, disasm=args.disasm), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_text(dump, disasm=args.disasm))
    return EXIT_OK


def _with_cli_hint(dump: Any) -> Any:
    """Say how to import a module from the command line (the codec's message names the API)."""
    error = dump.frames_error
    if error and "is not imported" in error and "--allow-module" not in error:
        import attrs

        module = error.split("'")[1] if error.count("'") >= 2 else "MODULE"
        return attrs.evolve(dump, frames_error=f"{error} (with agentrt dump: --allow-module {module})")
    return dump


def cmd_diff(args: argparse.Namespace) -> int:
    from agentrt.inspect._diff import diff_dumps, diff_to_json, render_diff

    store = _open_store(args)
    try:
        _make_cwd_importable()
        before = _dump_checkpoint(store, args.run_id, args.a, args.allow_modules)
        after = _dump_checkpoint(store, args.run_id, args.b, args.allow_modules)
    finally:
        store.close()
    for dump, seq in ((before, args.a), (after, args.b)):
        if dump.frames is None:
            return _fail(
                f"checkpoint {seq} of run {args.run_id!r} cannot be decoded here: {dump.frames_error}"
            )
    diff = diff_dumps(before, after)
    if args.json:
        print(json.dumps(diff_to_json(diff), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_diff(diff))
    return EXIT_OK


def cmd_fork(args: argparse.Namespace) -> int:
    from agentrt.inspect._fork import fork_run

    store = _open_store(args)
    try:
        _make_cwd_importable()
        result = fork_run(store, args.run_id, args.seq, args.new_run_id)
    finally:
        store.close()
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": result.run_id,
                    "status": result.status,
                    "seq": result.seq,
                    "pending": result.pending,
                    "forked_from": {"run_id": result.from_run_id, "seq": result.seq},
                }
            )
        )
        return EXIT_OK
    store_arg = f" --store {args.store}" if args.store else ""
    origin = f"run {result.from_run_id} at checkpoint {result.seq}"
    print(f"forked {origin} into run {result.run_id} ({result.status})")
    if result.status == "waiting":
        print(f"  reply with: agentrt resume {result.run_id} --reply JSON{store_arg}")
    else:
        print(f"  continue with: agentrt resume {result.run_id}{store_arg}")
    return EXIT_OK


def _make_cwd_importable() -> None:
    """Like ``python -m``: modules in the current directory can be imported (agent modules usually are)."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
