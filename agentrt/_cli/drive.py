"""``agentrt run``, ``resume`` and ``retry``: drive a run here until it finishes, waits or blocks."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any  # Any: JSON replies; Runtime keyword arguments of mixed types

from agentrt._cli.common import (
    EXIT_HOST,
    Progress,
    add_agent_option,
    add_output_options,
    add_runtime_options,
    add_store_option,
    executors,
    fail,
    guarded,
    lease_seconds,
    load_agent_option,
    open_cli_store,
    parse_json_arg,
    print_result,
    step_budget,
)
from agentrt._runtime.retry import CLI_WORDS
from agentrt._runtime.runtime import Runtime
from agentrt._sdk.agent import load_agent
from agentrt.exceptions import NotWaiting, RunNotFound
from agentrt.observe import JsonlTraceExporter
from agentrt.stores import Store


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="start a run and drive it until it completes or waits",
        description="Start a run of the agent MODULE:ATTR (or path/to/file.py:ATTR) and drive it until it "
        "completes, fails, or waits for a reply. Exit status: 0 completed or waiting, 1 failed, "
        "2 bad input, 3 store or host problem.",
    )
    run.add_argument(
        "spec", metavar="MODULE:ATTR", help="the agent, e.g. examples.issue_summarizer:summarize_issue"
    )
    run.add_argument(
        "--input", metavar="JSON", default="{}", help="the agent's input as JSON (or @file.json)"
    )
    run.add_argument("--run-id", metavar="ID", default=None, help="id of the new run (default: random)")
    add_store_option(run)
    add_output_options(run)
    add_runtime_options(run)
    run.set_defaults(handler=guarded(cmd_run))

    resume = commands.add_parser(
        "resume",
        help="continue an interrupted, waiting or blocked run",
        description="Continue run ID from its last checkpoint: finished tool calls are not repeated, calls "
        "that were in flight are dispatched again. With --reply, deliver the reply the run waits for.",
    )
    resume.add_argument("run_id", metavar="ID")
    resume.add_argument(
        "--reply", metavar="JSON", default=None, help="the reply to the run's question, as JSON"
    )
    add_agent_option(resume)
    add_store_option(resume)
    add_output_options(resume)
    add_runtime_options(resume)
    resume.set_defaults(handler=guarded(cmd_resume))

    retry = commands.add_parser(
        "retry",
        help="restart a failed or blocked run from a checkpoint, on the code loaded now",
        description="Restart run ID, failed or blocked, from its newest checkpoint (or checkpoint SEQ) on "
        "the code importable now, and drive it until it completes, waits, fails or blocks again. Tool calls "
        "that completed at that checkpoint are not made again; calls that failed are. Exit status: 0 "
        "completed or waiting, 1 failed or blocked, 2 not a failed or blocked run / no such checkpoint, "
        "3 store or host problem.",
    )
    retry.add_argument("run_id", metavar="RUN")
    retry.add_argument(
        "--from",
        dest="from_seq",
        metavar="SEQ",
        type=int,
        default=None,
        help="the checkpoint to restart from (agentrt show RUN lists them; default: the newest)",
    )
    add_agent_option(retry)
    add_store_option(retry)
    add_output_options(retry)
    add_runtime_options(retry)
    retry.set_defaults(handler=guarded(cmd_retry))


def _runtime(store: Store, args: argparse.Namespace, closing: contextlib.ExitStack) -> Runtime:
    """The command's runtime; ``closing`` closes the ``--trace`` file once the command is done."""
    tracers: list[Any] = [Progress(args.log_format, verbose=args.verbose)]
    if args.trace:
        tracers.append(closing.enter_context(JsonlTraceExporter(args.trace)))
    extra: dict[str, Any] = {}
    if args.max_model_calls is not None:
        extra["max_model_calls"] = args.max_model_calls
    return Runtime(
        store,
        step_budget_seconds=step_budget(args),
        lease_seconds=lease_seconds(),
        executors=executors(args),
        on_trace=tracers,
        **extra,
    )


async def _finish(rt: Runtime, run_id: str, args: argparse.Namespace) -> int:
    rec = await rt.settle(run_id)
    error = rt.driver_error(run_id)
    if error is not None and not rec.finished:
        await rt.close()
        now = f"; it is blocked (agentrt show {run_id})" if rec.status == "blocked" else ""
        return fail(f"run {run_id!r} could not be driven: {type(error).__name__}: {error}{now}", EXIT_HOST)
    await rt.close()
    return print_result(rt.status(run_id), args.json)


def _drive(store: Store, args: argparse.Namespace, act: Callable[[Runtime], Awaitable[str]]) -> int:
    """``run``, ``resume`` and ``retry``: ``act`` on the command's runtime names the run, which is then
    driven until it settles and printed; the runtime and the ``--trace`` file are closed however it
    ends (the caller closes the store)."""

    async def main() -> int:
        with contextlib.ExitStack() as closing:
            rt = _runtime(store, args, closing)
            try:
                return await _finish(rt, await act(rt), args)
            finally:
                await rt.close()

    return asyncio.run(main())


def cmd_run(args: argparse.Namespace) -> int:
    agent = load_agent(args.spec)
    value = parse_json_arg(args.input, "--input")
    agent.convert_input(value)  # a schema error is reported before the store is touched
    store = open_cli_store(args)
    try:
        return _drive(store, args, lambda rt: rt.start(agent, value, run_id=args.run_id))
    finally:
        store.close()


def cmd_resume(args: argparse.Namespace) -> int:
    reply: Any = None
    if args.reply is not None:
        reply = parse_json_arg(args.reply, "--reply")
    store = open_cli_store(args, create=False)
    try:
        rec = store.get_run(args.run_id)
        if rec is None:
            raise RunNotFound(args.run_id, store.location)
        if rec.finished:
            if args.reply is not None:
                raise NotWaiting(f"run {rec.run_id!r} is {rec.status}; there is nothing to reply to")
            return print_result(rec, args.json)
        load_agent_option(store, rec.run_id, args)

        async def resume(rt: Runtime) -> str:
            rt.agent_of(rec)  # import the agent's module first: a bad spec is a clear error
            if args.reply is not None:
                target = await rt.reply(args.run_id, reply)
                if target != args.run_id:
                    await rt.resume(args.run_id)
            else:
                await rt.resume(args.run_id)
            return str(args.run_id)

        return _drive(store, args, resume)
    finally:
        store.close()


def cmd_retry(args: argparse.Namespace) -> int:
    store = open_cli_store(args, create=False)
    try:
        rec = store.get_run(args.run_id)
        if rec is None:
            raise RunNotFound(args.run_id, store.location)
        load_agent_option(store, rec.run_id, args)

        async def retry(rt: Runtime) -> str:
            rt.agent_of(rec)  # import the agent's module first: a bad spec is a clear error
            await rt.retry(args.run_id, args.from_seq, words=CLI_WORDS)
            return str(args.run_id)

        return _drive(store, args, retry)
    finally:
        store.close()
