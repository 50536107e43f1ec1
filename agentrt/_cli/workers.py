"""``agentrt worker``, ``submit``, ``reply`` and ``cancel``: runs that keep themselves alive.

``worker`` is a long-lived process that claims and drives every runnable run of a store
until SIGTERM/SIGINT, then drains (calls in flight finish and are journaled, every lease
is released so other workers take over at once).  ``submit``, ``reply`` and ``cancel`` are
clients: they record a queued run, an answer or a cancel request, and a worker does the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import shlex
import signal
import sys
from typing import Any  # Any: JSON documents; Runtime keyword arguments

from agentrt._cli.common import (
    EXIT_USAGE,
    Progress,
    add_output_options,
    add_runtime_options,
    add_store_option,
    executors,
    fail,
    guarded,
    lease_seconds,
    open_cli_store,
    parse_json_arg,
    print_result,
    result_object,
    step_budget,
)
from agentrt._runtime.runtime import Runtime
from agentrt._sdk.agent import load_agent
from agentrt.exceptions import SchemaError
from agentrt.observe import JsonlTraceExporter
from agentrt.stores.fleet import is_live


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help="claim and drive the store's runnable runs until SIGTERM/SIGINT",
        description="Claim and drive every runnable run of the store -- queued runs, interrupted runs "
        "(dead owner or expired lease), due timers, runs whose reply or children arrived -- until "
        "SIGTERM or SIGINT; then drain: calls in flight finish and are journaled, leases are released.",
    )
    add_store_option(worker)
    worker.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (agents, executors, migrations it defines); repeatable",
    )
    worker.add_argument(
        "--concurrency", type=int, default=64, metavar="N", help="drive at most N runs at once (default 64)"
    )
    worker.add_argument(
        "--limit",
        dest="limits",
        action="append",
        default=[],
        metavar="MODULE:ATTR=N",
        help="drive at most N runs of this agent at once across every worker of the store; repeatable "
        "(give every worker the same limits)",
    )
    worker.add_argument(
        "--poll-seconds",
        type=float,
        default=5.0,
        metavar="S",
        help="look for work at least every S seconds when no wake-up arrives (default 5)",
    )
    worker.add_argument(
        "--drain-seconds",
        type=float,
        default=30.0,
        metavar="S",
        help="on SIGTERM, wait up to S seconds for calls in flight (default 30)",
    )
    add_output_options(worker)
    add_runtime_options(worker)
    worker.set_defaults(handler=guarded(cmd_worker))

    submit = commands.add_parser(
        "submit",
        help="store a queued run for a worker",
        description="Validate the input and store a queued run of the agent MODULE:ATTR; a worker "
        "(agentrt worker) drives it. Prints run_id and status.",
    )
    submit.add_argument("spec", metavar="MODULE:ATTR")
    given = submit.add_mutually_exclusive_group()
    given.add_argument(
        "--input", metavar="JSON", default=None, help="the agent's input as JSON (or @file.json); default {}"
    )
    given.add_argument(
        "--input-file",
        metavar="FILE",
        default=None,
        help="a batch: one run per line of FILE, each line one input as JSON (JSON Lines; - reads stdin)",
    )
    submit.add_argument(
        "--count",
        type=int,
        default=1,
        metavar="N",
        help="store N runs of each input (default 1); one process and store connection for all of them",
    )
    submit.add_argument("--run-id", metavar="ID", default=None, help="id of the new run (default: random)")
    submit.add_argument("--priority", type=int, default=0, metavar="P", help="higher runs are claimed first")
    submit.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="cancel the run (agentrt.DeadlineExceeded at its pending await) if it has not ended "
        "SECONDS from now",
    )
    add_store_option(submit)
    submit.add_argument("--json", action="store_true", help="print one JSON object per run (JSON Lines)")
    submit.set_defaults(handler=guarded(cmd_submit))

    reply = commands.add_parser(
        "reply",
        help="answer the question a run waits on; a worker continues it",
        description="Record JSON as the answer to the task.ui.ask run ID (or its sub-run) waits on. "
        "A worker continues the run.",
    )
    reply.add_argument("run_id", metavar="ID")
    reply.add_argument("value", metavar="JSON", help="the reply as JSON (or @file.json)")
    reply.add_argument(
        "--wait",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="wait up to SECONDS for a live worker to take the reply, and print the status it led to "
        "(default 2; 0: print at once; no wait when no worker runs)",
    )
    add_store_option(reply)
    reply.add_argument("--json", action="store_true", help="print one JSON object")
    reply.set_defaults(handler=guarded(cmd_reply))

    cancel = commands.add_parser(
        "cancel",
        help="cancel a run and its sub-runs",
        description="Cancel run ID and its unfinished sub-runs: each gets agentrt.Cancelled at the await "
        "it is suspended on, its finally blocks run, and its status becomes cancelled (a worker does this; "
        "a queued run is cancelled at once).",
    )
    cancel.add_argument("run_id", metavar="ID")
    add_store_option(cancel)
    cancel.add_argument("--json", action="store_true", help="print one JSON object")
    cancel.set_defaults(handler=guarded(cmd_cancel))


def _client(args: argparse.Namespace, *, create: bool = False) -> Runtime:
    """A runtime that only talks to the store; only ``submit`` may create a store.  Close it with
    :func:`_close_client`: the runtime does not own a store it was handed."""
    return Runtime(open_cli_store(args, create=create), worker=False, step_budget_seconds=None)


async def _close_client(rt: Runtime) -> None:
    """Close the client and its store.  A PostgreSQL store left open is closed by the pool's
    finalizer at interpreter exit, which waited ~20 s for its connection threads (every
    ``agentrt reply`` / ``submit`` / ``cancel`` against PostgreSQL took that long to exit)."""
    try:
        await rt.close()
    finally:
        rt.store.close()


def _print(obj: dict[str, Any], as_json: bool, text: str) -> None:
    print(json.dumps(obj) if as_json else text)


def cmd_submit(args: argparse.Namespace) -> int:
    agent = load_agent(args.spec)
    if args.count < 1:
        return fail(f"--count {args.count}: must be 1 or more runs", EXIT_USAGE)
    if args.input_file:
        labelled = batch_inputs(args.input_file)
    else:
        labelled = [("", parse_json_arg(args.input or "{}", "--input"))]
    if args.run_id is not None and len(labelled) * args.count > 1:
        return fail("--run-id names one run; leave it out with --count N or --input-file", EXIT_USAGE)
    for where, value in labelled:
        try:
            agent.convert_input(value)  # every input first: a bad line stores no run at all
        except SchemaError as exc:
            raise SchemaError(f"{where}{exc.path}", exc.problem) from None

    async def main() -> int:
        rt = _client(args, create=True)
        try:
            for _where, value in labelled:
                for _ in range(args.count):
                    run_id = await rt.start(
                        agent, value, run_id=args.run_id, priority=args.priority, deadline=args.deadline
                    )
                    _print({"run_id": run_id, "status": "queued"}, args.json, f"run {run_id} queued")
            return 0
        finally:
            await _close_client(rt)

    return asyncio.run(main())


def batch_inputs(path: str) -> list[tuple[str, Any]]:
    """The inputs of ``--input-file`` (one JSON value per non-blank line; ``-``: stdin), each with
    the words that name its line in an error (``--input-file F line 3: ``)."""
    try:
        if path == "-":
            lines = sys.stdin.read().splitlines()
        else:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
    except OSError as exc:
        raise SchemaError("--input-file", f"cannot read {path!r}: {exc.strerror}") from None
    inputs = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            where = f"--input-file {path} line {number}"
            inputs.append((f"{where}: ", parse_json_arg(line, where)))
    if not inputs:
        raise SchemaError("--input-file", f"{path!r} holds no input (one JSON value per line)")
    return inputs


def cmd_reply(args: argparse.Namespace) -> int:
    from agentrt._runtime.replied import status_after_reply

    value = parse_json_arg(args.value, "JSON")
    if args.wait < 0:
        return fail(f"--wait {args.wait:g}: must be 0 or more seconds", EXIT_USAGE)

    async def main() -> int:
        rt = _client(args)
        try:
            before = rt.status(args.run_id)
            target = await rt.reply(args.run_id, value)
            question = before.seq if target == args.run_id else None
            # No live worker (agentrt worker / serve) in the store's registry: nobody will take it now.
            workers = any(is_live(w) for w in rt.store.list_workers())
            wait = args.wait if workers else 0.0
            rec, taken = await status_after_reply(rt, args.run_id, question, wait)
            obj = {"run_id": args.run_id, "status": rec.status, "replied_to": target, "taken": taken}
            to = "" if target == args.run_id else f" (to its sub-run {target})"
            start = shlex.join(["agentrt", "worker", *(["--store", args.store] if args.store else [])])
            if taken:
                text = f"reply recorded for run {args.run_id}{to}; the run is {rec.status}"
            elif not workers:
                text = (
                    f"reply recorded for run {args.run_id}{to}; no worker is running for this store, so "
                    f"the run waits for one (start one: {start})"
                )
            else:
                text = (
                    f"reply recorded for run {args.run_id}{to}; no worker took it within {wait:g} s; "
                    f"it waits for one (`agentrt workers` lists them; or start one: {start})"
                )
            _print(obj, args.json, text)
            return 0
        finally:
            await _close_client(rt)

    return asyncio.run(main())


def cmd_cancel(args: argparse.Namespace) -> int:
    async def main() -> int:
        rt = _client(args)
        try:
            ids = await rt.cancel(args.run_id)
            rec = rt.status(args.run_id)
            obj = {"run_id": args.run_id, "status": rec.status, "cancelled": ids}
            if not ids:
                _print(obj, args.json, f"run {args.run_id} is {rec.status}; nothing to cancel")
            else:
                _print(obj, args.json, f"cancel requested for {', '.join(ids)}")
            return 0
        finally:
            await _close_client(rt)

    return asyncio.run(main())


def cmd_worker(args: argparse.Namespace) -> int:
    if args.concurrency < 1:
        return fail(f"--concurrency must be >= 1, got {args.concurrency}", EXIT_USAGE)
    limits: dict[str, int] = {}
    for item in args.limits:
        spec, _, n = item.rpartition("=")
        if not spec or not n.isdigit() or int(n) < 1:
            return fail(
                f"--limit {item}: expected MODULE:ATTR=N with N >= 1 (e.g. app.agents:triage=4)", EXIT_USAGE
            )
        limits[spec] = int(n)
    sys.path.insert(0, os.getcwd())
    for module in args.imports:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return fail(f"--import {module}: {exc}", EXIT_USAGE)
    # A worker is a service: its log of every event is what an operator reads, so -v is implied.
    tracers: list[Any] = [Progress(args.log_format, verbose=True)]
    closing = contextlib.ExitStack()  # the --trace file, closed when the worker is done
    if args.trace:
        tracers.append(closing.enter_context(JsonlTraceExporter(args.trace)))
    store = open_cli_store(args)
    extra: dict[str, Any] = {}
    if args.max_model_calls is not None:
        extra["max_model_calls"] = args.max_model_calls

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        rt = Runtime(
            store,
            concurrency=args.concurrency,
            agent_limits=limits,
            poll_seconds=args.poll_seconds,
            step_budget_seconds=step_budget(args),
            lease_seconds=lease_seconds(),
            executors=executors(args),
            on_trace=tracers,
            **extra,
        )
        async with rt:
            print(f"agentrt worker {rt.owner}: driving runs of {store.location}", file=sys.stderr, flush=True)
            await stop.wait()
            print(f"agentrt worker {rt.owner}: draining", file=sys.stderr, flush=True)
            await rt.drain(args.drain_seconds)
        return 0

    try:
        return asyncio.run(main())
    finally:
        store.close()
        closing.close()


__all__ = ["print_result", "register", "result_object"]
