"""``agentrt teams plan | lint | stats | lint-bundle`` (registered by :mod:`agentrt.cli`).

``plan`` starts the team lead on a spec and drives it to the team gate, where it waits (the process
exits; the run costs one row).  The gate is answered with ``agentrt resume RUN --reply JSON`` (the
decision), and the lanes run in that process.  ``lint`` checks a run's receipts, ``stats`` reports
usage per tier and per lane, ``lint-bundle`` checks context bundles against the token cap.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any  # Any: JSON from the command line; Runtime keyword arguments

from agentrt.teams.contracts import TIERS

__all__ = ["register"]

EXIT_OK, EXIT_FLAGGED, EXIT_OVER = 0, 1, 2


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from agentrt._cli.common import (
        EXIT_USAGE,
        add_output_options,
        add_runtime_options,
        add_store_option,
        guarded,
    )

    teams = commands.add_parser(
        "teams",
        help="teams of specialists: plan a team, lint receipts, usage per tier and lane",
        description="Teams of specialists on the durable runtime (docs/teams.md).",
    )
    sub = teams.add_subparsers(dest="teams_command", metavar="COMMAND", title="commands")

    def usage(args: argparse.Namespace) -> int:
        teams.print_help(sys.stderr)
        return EXIT_USAGE

    teams.set_defaults(handler=usage)

    plan = sub.add_parser(
        "plan",
        help="propose the team for a spec and wait at the team gate",
        description="Start the team lead on SPEC: it composes the team and waits at the team decision gate. "
        "Answer the gate with `agentrt resume RUN --reply JSON`; nothing approves it for you.",
    )
    plan.add_argument("spec", metavar="SPEC", help="the spec: Markdown with front matter listing the lanes")
    plan.add_argument("--project", metavar="DIR", default=".", help="the project directory (default: .)")
    plan.add_argument("--run-id", metavar="ID", default=None, help="id of the team run (default: random)")
    plan.add_argument(
        "--model-tier",
        choices=TIERS,
        default=None,
        help="pin every lane of the run to this tier (research stays powerful)",
    )
    add_store_option(plan)
    add_output_options(plan)
    add_runtime_options(plan)
    plan.set_defaults(handler=guarded(cmd_plan))

    lint = sub.add_parser(
        "lint",
        help="flag receipts with no envelope block, duplicate blocks, or an invalid envelope",
        description="Check the receipts under .agentrt/runs/RUN/handoffs/. Warn mode: exit 0 unless "
        "--enforce (then 1 when something is flagged).",
    )
    lint.add_argument("run_id", metavar="RUN")
    lint.add_argument("--project", metavar="DIR", default=".")
    lint.add_argument("--enforce", action="store_true", help="exit 1 when a receipt is flagged")
    lint.add_argument("--json", action="store_true")
    lint.set_defaults(handler=guarded(cmd_lint))

    bundle = sub.add_parser(
        "lint-bundle",
        help="check context bundles against the token cap (exit 2 when one is over)",
    )
    bundle.add_argument("paths", metavar="FILE", nargs="+")
    bundle.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the cap (default: context.max_tokens of the project's .agentrt/teams.yaml, else 6000)",
    )
    bundle.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help="the project whose config sets the cap (default: the one the FILE is in, "
        "DIR/.agentrt/context/RUN/FILE, else the current directory)",
    )
    bundle.set_defaults(handler=guarded(cmd_lint_bundle))

    status = sub.add_parser(
        "status",
        help="a team run as its lanes: tier, state, attempts, receipts, escalations, live",
        description="Each lane of the team run: its tier and model, its state (running lanes are "
        "live), attempts, accepted receipts, advisor consults and reviews.",
    )
    status.add_argument("run_id", metavar="RUN")
    add_store_option(status)
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=guarded(cmd_status))

    stats = sub.add_parser("stats", help="model usage of a team run per tier and per lane, from the journal")
    stats.add_argument("run_id", metavar="RUN")
    add_store_option(stats)
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(handler=guarded(cmd_stats))


def _describe(prompt: dict[str, Any], run_id: str) -> str:
    p = prompt["proposal"]
    lines = [
        f"team proposal for {p['slug']} ({p['phase']}): {len(p['roles'])} roles, "
        f"{len(p['excluded'])} excluded, {len(p['missing'])} missing"
    ]
    for role in p["roles"]:
        lines.append(
            f"  role {role['specialist']} ({role['source']}, default tier {role['default_tier']}): "
            f"{role['reason']}"
        )
    for ex in p["excluded"]:
        lines.append(f"  excluded {ex['specialist']}: {ex['reason']}")
    for lane in p["lanes"]:
        deps = ", ".join(lane.get("depends_on") or []) or "-"
        lines.append(
            f"  lane {lane['task_id']} -> {lane['specialist']} · tier {lane['tier']} · depends on {deps}"
        )
    lines += [f"  option {k}: {v}" for k, v in sorted(p["options"].items())]
    for choice, option_reply in sorted((prompt.get("options_for_missing") or {}).items()):
        lines.append(f"  take option {choice}: agentrt resume {run_id} --reply '{json.dumps(option_reply)}'")
    if prompt.get("note"):
        lines.append(f"note: {prompt['note']}")
    if prompt.get("blocked"):
        lines.append(f"blocked: {prompt['blocked']}")
    reply = json.dumps(prompt["reply_with"])
    lines += [
        f"run {run_id} waits at the team gate ({prompt['gate']}, proposal {prompt['proposal_sha256'][:12]}).",
        f"  approve:  agentrt resume {run_id} --reply '{reply}'",
        f"  or reply with a verb: {', '.join(prompt['verbs'])}",
    ]
    return "\n".join(lines)


def cmd_plan(args: argparse.Namespace) -> int:
    from agentrt._cli.common import (
        EXIT_HOST,
        Progress,
        executors,
        fail,
        lease_seconds,
        open_cli_store,
        print_result,
        step_budget,
    )
    from agentrt._runtime.runtime import Runtime
    from agentrt.observe import JsonlTraceExporter
    from agentrt.teams.team import team_lead

    project = os.path.abspath(args.project)
    spec = os.path.relpath(os.path.abspath(args.spec), project)
    if not os.path.isfile(os.path.join(project, spec)):
        return fail(f"teams plan: no spec file {args.spec!r} (looked in {project})", 2)
    value = {"spec": spec, "project": project, "model_tier": args.model_tier}
    store = open_cli_store(args)
    closing = contextlib.ExitStack()  # the --trace file, closed when the command is done
    try:

        async def main() -> int:
            extra: dict[str, Any] = {}
            if args.max_model_calls is not None:
                extra["max_model_calls"] = args.max_model_calls
            tracers: list[Any] = [Progress(args.log_format, verbose=args.verbose)]
            if args.trace:
                tracers.append(closing.enter_context(JsonlTraceExporter(args.trace)))
            rt = Runtime(
                store,
                step_budget_seconds=step_budget(args),
                lease_seconds=lease_seconds(),
                executors=executors(args),
                on_trace=tracers,
                **extra,
            )
            try:
                run_id = await rt.start(team_lead, value, run_id=args.run_id)
                rec = await rt.settle(run_id)
                error = rt.driver_error(run_id)
                if error is not None and not rec.finished:
                    return fail(
                        f"run {run_id!r} could not be driven: {type(error).__name__}: {error}", EXIT_HOST
                    )
                prompt = (rec.pending or {}).get("prompt")
                if rec.status != "waiting" or not isinstance(prompt, dict) or "proposal" not in prompt:
                    return print_result(rec, args.json)
                if args.json:
                    print(json.dumps({"run_id": run_id, "status": rec.status, "prompt": prompt}))
                else:
                    print(_describe(prompt, run_id))
                return EXIT_OK
            finally:
                await rt.close()

        return asyncio.run(main())
    finally:
        store.close()
        closing.close()


def cmd_lint(args: argparse.Namespace) -> int:
    from agentrt.teams.report import lint_receipts

    ok, problems = lint_receipts(args.project, args.run_id)
    if args.json:
        print(json.dumps({"ok": ok, "flagged": problems}))
    else:
        for path in ok:
            print(f"ok       {path}")
        for problem in problems:
            print(f"flagged  {problem}")
        print(f"{len(ok)} receipt(s) ok, {len(problems)} flagged")
    return EXIT_FLAGGED if problems and args.enforce else EXIT_OK


def _project_of(path: str) -> Path:
    """The project a bundle belongs to: the parent of the ``.agentrt`` above it, else the current dir."""
    for parent in Path(path).resolve().parents:
        if parent.name == ".agentrt":
            return parent.parent
    return Path(".")


def cmd_lint_bundle(args: argparse.Namespace) -> int:
    from agentrt.teams.bundle import lint_bundle
    from agentrt.teams.tools import load_config

    worst = EXIT_OK
    for path in args.paths:
        cap = args.max_tokens
        if cap is None:  # the project's context.max_tokens, as the lead caps the bundles it builds
            cap = load_config(args.project or _project_of(path))["max_tokens"]
        code, message = lint_bundle(path, cap)
        print(message, file=sys.stderr if code else sys.stdout)
        worst = max(worst, code)
    return worst


def cmd_status(args: argparse.Namespace) -> int:
    from agentrt._cli.common import open_cli_store
    from agentrt.teams.report import team_status

    store = open_cli_store(args, read_only=True)
    try:
        status = team_status(store, args.run_id)
    finally:
        store.close()
    if args.json:
        print(json.dumps(status))
        return EXIT_OK
    head = f"team run {status['run_id']} ({status['status']}"
    head += f", goal {status['goal_status']})" if status["goal_status"] else ")"
    print(head)
    if status["gate"]:
        print(f"gate: {status['gate']} (agentrt show {status['run_id']} shows the question)")
    if not status["lanes"]:
        print("no lane dispatched yet")
        return EXIT_OK
    print(
        f"{'lane':<14}{'specialist':<16}{'tier':<10}{'model':<10}{'state':<18}"
        f"{'tries':>6}{'receipts':>9}{'escal.':>7}{'reviews':>8}"
    )
    for lane in status["lanes"]:
        state = lane["state"] + (" (live)" if lane["live"] else "")
        print(
            f"{lane['task_id']:<14}{lane['specialist']:<16}{lane['tier']:<10}{lane['model']:<10}{state:<18}"
            f"{lane['attempts']:>6}{lane['receipts']:>9}{lane['escalations']:>7}{lane['reviews']:>8}"
        )
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    from agentrt._cli.common import open_cli_store
    from agentrt.teams.report import team_stats

    store = open_cli_store(args, read_only=True)
    try:
        stats = team_stats(store, args.run_id)
    finally:
        store.close()
    if args.json:
        print(json.dumps(stats))
        return EXIT_OK
    print(f"team run {stats['run_id']} ({stats['status']})")
    print(f"{'tier':<10}{'calls':>7}{'tokens':>10}")
    for tier in TIERS:
        if tier in stats["tiers"]:
            t = stats["tiers"][tier]
            print(f"{tier:<10}{t['model_calls']:>7}{t['total_tokens']:>10}")
    print(f"{'total':<10}{stats['total']['model_calls']:>7}{stats['total']['total_tokens']:>10}")
    print(
        f"\n{'lane':<12}{'specialist':<18}{'tier':<10}{'model':<14}{'tries':>6}{'calls':>7}{'tokens':>9}{'advisor':>9}"
    )
    for lane in stats["lanes"]:
        print(
            f"{lane['task_id']:<12}{lane['specialist']:<18}{lane['tier']:<10}{lane['model']:<14}"
            f"{lane['attempts']:>6}{lane['model_calls']:>7}{lane['total_tokens']:>9}{lane['advisor_tokens']:>9}"
        )
    return EXIT_OK
