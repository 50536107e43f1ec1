"""``agentrt move RUN --from S1 --to S2``: move a run and its sub-runs to another store, re-sealed
for it (see :mod:`agentrt.inspection._move`)."""

from __future__ import annotations

import argparse
import json

from agentrt._cli.common import guarded
from agentrt.stores import open_store


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    move = commands.add_parser(
        "move",
        help="move a run and its sub-runs to another store, re-sealed for it",
        description="Move RUN and its sub-runs from one store to another. Every blob of a store is "
        "sealed for its identity (agentrt show --store S --json prints store_id), so a copied "
        "checkpoint is refused elsewhere; this command verifies each blob with the source's keys and "
        "signs it again with the target's (both keys are needed: each store's key file, or "
        "AGENTRT_BLOB_KEY). Unfinished runs are then cancelled in the source with the error RunMoved; "
        "finished ones stay there as history.",
    )
    move.add_argument("run_id", metavar="RUN")
    move.add_argument("--from", dest="source", metavar="S1", required=True, help="the store the run is in")
    move.add_argument("--to", dest="target", metavar="S2", required=True, help="the store it goes to")
    move.add_argument("--json", action="store_true", help="print one JSON object")
    move.set_defaults(handler=guarded(cmd_move))


def cmd_move(args: argparse.Namespace) -> int:
    from agentrt.inspection import move_run

    source = open_store(args.source, create=False)
    try:
        target = open_store(args.target)
        try:
            result = move_run(source, target, args.run_id)
        finally:
            target.close()
    finally:
        source.close()
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": result.run_id,
                    "runs": list(result.runs),
                    "from": result.source,
                    "to": result.target,
                    "store_id": result.target_store_id,
                }
            )
        )
        return 0
    subs = len(result.runs) - 1
    print(
        f"moved run {result.run_id}"
        + (f" and {subs} sub-run(s)" if subs else "")
        + f" from {result.source} to {result.target} (store_id {result.target_store_id}); "
        f"continue it there: agentrt resume {result.run_id} --store {args.target}"
    )
    return 0
