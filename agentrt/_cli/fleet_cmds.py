"""``agentrt workers``: the live workers of a store, what code each carries, and the stranded runs.

Read-only, like ``agentrt runs``: it opens the store with ``read_only=True`` (nothing created,
migrated or written) and imports neither the runtime nor the codec.  What it reads is described
in :mod:`agentrt.stores.fleet`.
"""

from __future__ import annotations

import argparse
import json

from agentrt._cli.common import add_store_option, guarded, open_cli_store
from agentrt.stores.fleet import Fleet, fleet_object, read_fleet
from agentrt.stores.registry import WorkerInfo

__all__ = ["cmd_workers", "register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    workers = commands.add_parser(
        "workers",
        help="list the live workers, the code they carry, and the runs none of them can resume",
        description="List the store's live workers (owner, host/pid, Python, age, the runs they hold, "
        "the code requirements they have judged they carry or lack), the workers gone lately, and "
        "then the unfinished runs no live worker can resume (stranded) with the reason.",
    )
    workers.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object: {"store", "workers": [{"owner", "live", ...}], "stranded": [...]}',
    )
    add_store_option(workers)
    workers.set_defaults(handler=guarded(cmd_workers))


def cmd_workers(args: argparse.Namespace) -> int:
    store = open_cli_store(args, read_only=True)
    try:
        fleet = read_fleet(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(fleet_object(fleet)))
    else:
        _print_fleet(fleet)
    return 0


def _duration(seconds: float) -> str:
    """``42s``, ``5m02s``, ``3h10m``, ``2d04h``: an age at a glance."""
    s = int(max(seconds, 0))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def _print_worker(w: WorkerInfo, fleet: Fleet) -> None:
    runs = fleet.holding.get(w.owner, ())
    held = f"{len(runs)} run(s) held"
    if runs:
        held += ": " + ", ".join(runs[:5]) + (" ..." if len(runs) > 5 else "")
    print(
        f"{w.owner}  pid {w.pid} on {w.host}  python {w.python}  {w.version}  "
        f"up {_duration(fleet.at - w.started_at)}  seen {_duration(fleet.at - w.last_seen)} ago  {held}"
    )
    if w.damaged:
        print(f"  damaged: column {w.damaged[0]}: {w.damaged[1]} (the stored row; shown with a default)")
    for a in w.agents:
        print(f"  agent    {a.spec}  ({a.code})" if a.code else f"  agent    {a.spec}")
    for v in w.carried:
        print(f"  carries  {v.key}  {v.summary}")
    for v in w.lacking:
        print(f"  lacks    {v.key}  {v.summary}: {v.reason}")


def _print_fleet(fleet: Fleet) -> None:
    if fleet.live:
        print(f"{len(fleet.live)} live worker(s) on {fleet.location}")
        for w in fleet.live:
            _print_worker(w, fleet)
    else:
        print(f"no live workers on {fleet.location} (start one with: agentrt worker --store ...)")
    for w in fleet.gone:
        print(f"gone     {w.owner}  python {w.python}  last seen {_duration(fleet.at - w.last_seen)} ago")
        if w.damaged:
            print(f"  damaged: column {w.damaged[0]}: {w.damaged[1]}")
    if not fleet.stranded:
        if fleet.live:
            print("no stranded runs: every unfinished run a live worker has met, one of them can resume")
        return
    print()
    print(f"{len(fleet.stranded)} stranded run(s): no live worker carries their code")
    for s in fleet.stranded:
        reason = s.reasons[0][1] if s.reasons else ""
        run = s.run
        print(f"  {run.run_id}  {run.status}  {run.agent}  lacked by {len(s.reasons)} worker(s): {reason}")
    print(
        "  they wait (not failed): start a worker with their code, or move them with agentrt upgrade "
        "(agentrt upgrade --dry-run first)"
    )
