"""``agentrt dump``, ``agentrt diff`` and ``agentrt fork`` (registered by :mod:`agentrt.cli`).

Exit status (the one table of :mod:`agentrt._cli.common`): 0 done, 2 an unknown
run, checkpoint or blob file, or a wrong argument, 3 store trouble (an unusable
store, a corrupt or incompatible blob, a checkpoint that cannot be decoded here:
``dump`` still prints the header and says why its frames cannot be shown, so a
script sees the failure and a person sees the reason); each reported in one line
on stderr without a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from agentrt._cli.common import (
    EXIT_HOST,
    EXIT_OK,
    EXIT_USAGE,
    add_agent_option,
    add_store_option,
    fail,
    guarded,
    load_agent_option,
)
from agentrt.exceptions import AgentrtError
from agentrt.inspection import Dump, dump_run

if TYPE_CHECKING:
    from agentrt.stores.base import Store

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    dump.set_defaults(handler=guarded(cmd_dump))

    diff = commands.add_parser(
        "diff",
        help="what changed between two checkpoints of a run",
        description="Compare checkpoints A and B of run ID: per frame, where it moved, locals added, "
        "removed and changed (old → new), value-stack changes; and the pending request. With A = B, "
        "checkpoint A as it was before agentrt upgrade moved it to new code, and as it is: per frame the "
        "old code and site → the new ones, locals carried over, supplied by a migration, dropped.",
    )
    diff.add_argument("run_id", metavar="ID")
    diff.add_argument("a", metavar="A", type=int, help="sequence number of the first checkpoint")
    diff.add_argument("b", metavar="B", type=int, help="sequence number of the second checkpoint")
    diff.add_argument("--json", action="store_true", help="print the differences as one JSON object")
    _common(diff)
    diff.set_defaults(handler=guarded(cmd_diff))

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
    add_agent_option(fork)
    fork.set_defaults(handler=guarded(cmd_fork))


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
    add_agent_option(parser)


# --------------------------------------------------------------------------- loading


def _open_store(args: argparse.Namespace, *, read_only: bool, create: bool = False) -> Store:
    try:
        from agentrt.stores import open_store
    except ImportError as exc:  # pragma: no cover - the stores are part of agentrt
        raise AgentrtError(f"the run store is not available in this installation ({exc})") from None
    return open_store(args.store, read_only=read_only, create=create)


def _looks_like_path(target: str) -> bool:
    return os.sep in target or (os.altsep is not None and os.altsep in target) or target.endswith(".blob")


# --------------------------------------------------------------------------- commands


def cmd_dump(args: argparse.Namespace) -> int:
    from agentrt.inspection import Source, dump_blob, render_text, to_json

    target = args.target
    if os.path.exists(target) or _looks_like_path(target):
        if args.seq is not None:
            return fail("--seq selects a checkpoint of a run; it does not apply to a blob file", EXIT_USAGE)
        try:
            with open(target, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return fail(f"cannot read blob file {target!r}: no such file", EXIT_USAGE)
        except OSError as exc:
            return fail(f"cannot read blob file {target!r}: {exc.strerror or exc}", EXIT_USAGE)
        _make_cwd_importable()
        dump = dump_blob(
            blob,
            Source("file", path=target),
            allow_modules=args.allow_modules,
            allow_unsigned=args.allow_unsigned,
        )
    else:
        store = _open_store(args, read_only=True)
        try:
            _make_cwd_importable()
            load_agent_option(store, target, args)
            dump = dump_run(store, target, args.seq, args.allow_modules, args.allow_unsigned)
        finally:
            store.close()
    undecodable = dump.frames_error if dump.frames is None else None
    dump = _with_cli_hint(dump, args)
    if args.json:
        print(json.dumps(to_json(dump, disasm=args.disasm), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_text(dump, disasm=args.disasm))
    if undecodable is not None:
        return fail(f"only the header was shown; the frames cannot be decoded here: {undecodable}", EXIT_HOST)
    return EXIT_OK


def _with_cli_hint(dump: Dump, args: argparse.Namespace) -> Dump:
    """Say how to make the frames showable from the command line (the dump's reason names the API):
    a run whose agent module is not importable here gets ``--agent FILE``, a blob file that names a
    module not imported gets ``--allow-module`` with the PYTHONPATH that finds it, from any directory."""
    import importlib.util

    import attrs

    from agentrt._cli.hints import agent_hint, allow_module_hint

    error = dump.frames_error
    if not error or dump.frames is not None:
        return dump
    agent = dump.source.agent
    if dump.source.kind == "run" and agent and not agent.startswith("<local>:"):
        module = agent.rpartition(":")[0]
        try:
            missing = importlib.util.find_spec(module) is None
        except (ImportError, ValueError):
            missing = True
        if missing:
            return attrs.evolve(dump, frames_error=error + agent_hint(args, agent))
    if "is not imported" in error and error.count("'") >= 2:
        module = error.split("'")[1]
        blob_file = dump.source.path if dump.source.kind == "file" else None
        return attrs.evolve(dump, frames_error=error + allow_module_hint(args, module, blob_file))
    return dump


def cmd_diff(args: argparse.Namespace) -> int:
    from agentrt.inspection import diff_dumps, diff_to_json, render_diff

    store = _open_store(args, read_only=True)
    try:
        _make_cwd_importable()
        load_agent_option(store, args.run_id, args)
        if args.a == args.b:
            return _diff_upgrade(store, args)
        before = dump_run(store, args.run_id, args.a, args.allow_modules)
        after = dump_run(store, args.run_id, args.b, args.allow_modules)
    finally:
        store.close()
    for dump, seq in ((before, args.a), (after, args.b)):
        if dump.frames is None:
            moved = any(u.how == "restarted" for u in after.upgrades)
            hint = (
                f" (the run was restarted on new code: `agentrt dump {args.run_id}` shows how)"
                if moved
                else ""
            )
            return fail(
                f"checkpoint {seq} of run {args.run_id!r} cannot be decoded here: {dump.frames_error}{hint}",
                EXIT_HOST,
            )
    diff = diff_dumps(before, after)
    if args.json:
        print(json.dumps(diff_to_json(diff), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_diff(diff))
    return EXIT_OK


def _diff_upgrade(store: Store, args: argparse.Namespace) -> int:
    """``agentrt diff ID N N``: checkpoint N before its upgrade (the kept blob) and after it."""
    from agentrt.inspection import Source, dump_blob, render_upgrade_diff, upgrade_diff, upgrade_diff_to_json
    from agentrt.keys import keyring_for_store

    after = dump_run(store, args.run_id, args.a, args.allow_modules)
    kept = [r for r in store.replaced_checkpoints(args.run_id) if r.seq == args.a]
    before = None
    if kept:
        before = dump_blob(
            kept[0].blob,
            Source("run", args.run_id, args.a),
            allow_modules=args.allow_modules,
            keyring=keyring_for_store(store),
            bind=("checkpoint", args.run_id, args.a),
        )
    diff = upgrade_diff(store, args.run_id, args.a, before, after)
    if args.json:
        print(json.dumps(upgrade_diff_to_json(diff), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_upgrade_diff(diff))
    return EXIT_OK


def cmd_fork(args: argparse.Namespace) -> int:
    from agentrt.inspection import fork_run

    store = _open_store(args, read_only=False, create=False)
    try:
        _make_cwd_importable()
        load_agent_option(store, args.run_id, args)
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
