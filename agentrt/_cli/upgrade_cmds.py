"""``agentrt upgrade [--dry-run] [--store S] [--json]`` (registered by :mod:`agentrt.cli`)."""

from __future__ import annotations

import argparse
import json
import sys

from agentrt._cli.common import EXIT_OK, add_store_option, guarded, open_cli_store
from agentrt._codec import short
from agentrt._frames import Verdict
from agentrt._upgrade import RunReport, upgrade_store

#: Exit status when some unfinished run is blocked or needs a migration (the deploy would strand it).
EXIT_STRANDED = 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    upgrade = commands.add_parser(
        "upgrade",
        help="move unfinished runs to the code loaded now (see what would happen with --dry-run)",
        description="Judge every unfinished run of the store against the agent code importable now: "
        "'unchanged' (the code it is suspended in did not change), 'migrates' (moved to the new code, "
        "automatically or by an @agentrt.migrate function), 'needs-migration' (an @agentrt.migrate "
        "function would move it; its from_digest and site are printed) or 'blocked' (it can only finish "
        "with the old code). Without --dry-run, the runs that migrate are moved and the move is recorded in "
        "their history, and a run of status blocked that resumes with the new code is made runnable again "
        "(a worker or agentrt resume continues it). Exit status: 0 when every run resumes with the new "
        "code, 1 when some would be stranded, 2 bad input, 3 store problem.",
    )
    upgrade.add_argument("--dry-run", action="store_true", help="report only; change nothing")
    upgrade.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    add_store_option(upgrade)
    upgrade.set_defaults(handler=guarded(cmd_upgrade))


def cmd_upgrade(args: argparse.Namespace) -> int:
    store = open_cli_store(args, read_only=args.dry_run, create=False)
    try:
        reports = upgrade_store(store, dry_run=args.dry_run)
    finally:
        store.close()
    if args.json:
        json.dump({"runs": [report.as_json() for report in reports]}, sys.stdout)
        sys.stdout.write("\n")
    else:
        _print(reports, args.dry_run)
    stranded = any(report.verdict > Verdict.MIGRATES for report in reports)
    return EXIT_STRANDED if stranded else EXIT_OK


def _print(reports: list[RunReport], dry_run: bool) -> None:
    if not reports:
        print("no unfinished runs")
        return
    for report in reports:
        applied = (
            " (applied)"
            if report.applied
            else (" (dry run)" if dry_run and report.verdict is Verdict.MIGRATES else "")
        )
        where = f" at checkpoint {report.seq}" if report.seq is not None else ""
        print(f"run {report.run_id}{where}: {report.verdict.text}{applied}")
        if report.unblocked:
            print(f"  unblocked: a worker or `agentrt resume {report.run_id}` continues it")
        if not any(frame.verdict is not Verdict.UNCHANGED for frame in report.frames):
            print(f"  {report.reason}")
        for frame in report.frames:
            if frame.verdict is Verdict.UNCHANGED:
                continue
            print(f"  {frame.verdict.text:<16} {frame.function}  digest {short(frame.digest)}")
            if frame.site:
                print(f"  {'':<16} site {frame.site}")
            print(f"  {'':<16} {frame.reason}")


def cmd_check_against(store_location: str, as_json: bool) -> int:
    """``agentrt check --against STORE``: ``upgrade --dry-run`` before a deploy, compiling the new
    code from the working directory and ``sys.path`` instead of importing it."""
    from agentrt._upgrade import StaticResolver, check_store

    store = open_cli_store(argparse.Namespace(store=store_location), read_only=True)
    try:
        reports = check_store(store, StaticResolver())
    finally:
        store.close()
    if as_json:
        json.dump({"runs": [report.as_json() for report in reports]}, sys.stdout)
        sys.stdout.write("\n")
    else:
        _print(reports, dry_run=True)
    return EXIT_STRANDED if any(report.verdict > Verdict.MIGRATES for report in reports) else EXIT_OK
