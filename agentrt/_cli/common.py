"""Shared plumbing of every command: options, the one error path and exit-status table, output, progress."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO  # Any: JSON from the command line; the agent's prompts

from agentrt.exceptions import (
    AgentrtError,
    AgentSpecError,
    CannotRetry,
    CorruptBlob,
    IncompatibleBlob,
    LeaseHeld,
    LeaseLost,
    MissingExecutor,
    NotWaiting,
    RunExists,
    SchemaError,
    StoreError,
)
from agentrt.stores import Store, open_store
from agentrt.stores.base import RunRecord
from agentrt.stores.views import result_object as result_object
from agentrt.stores.views import show_object as show_object

if TYPE_CHECKING:  # types only: agentrt.observe is not needed by `agentrt runs`/`show` (start-up)
    from agentrt.llm import Executors
    from agentrt.observe import TraceEvent

__all__ = [
    "EXIT_FAILED",
    "EXIT_HOST",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OUTPUT_CLOSED",
    "EXIT_USAGE",
    "add_store_option",
    "exit_status",
    "fail",
    "guarded",
    "open_cli_store",
    "result_object",
]

# The one exit-status table of every agentrt command (the README's "Exit status" says the same).
EXIT_OK = 0  # done: the run completed, or waits for a reply; a dump, diff or fork was made
EXIT_FAILED = 1  # the run failed or is blocked (its error or finding is printed as the result)
EXIT_USAGE = 2  # usage or unknown thing: arguments, agent spec, JSON, schema, no such run / checkpoint /
#                 blob file, a reply to a run that is not waiting, a retry of a run that is not failed or
#                 blocked, a missing executor, a `serve --port` in use or a --host not of this machine
EXIT_HOST = 3  # store trouble: the store or a checkpoint cannot be used (locked, corrupt, newer schema,
#                incompatible or corrupt blob), another process drives the run, or agentrt itself failed
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
EXIT_OUTPUT_CLOSED = 141  # the reader of stdout went away (`agentrt dump ID | head`; 128 + SIGPIPE)
#                           (agentrt.cli.output_closed says nothing more and returns it)

#: Errors of the user's input or naming something that does not exist (LookupError: no such run,
#: checkpoint or agent), and errors of the store; a blob error is store trouble although a ValueError.
_USAGE_ERRORS = (LookupError, SchemaError, RunExists, NotWaiting, MissingExecutor, CannotRetry)
_HOST_ERRORS = (StoreError, LeaseHeld, LeaseLost, CorruptBlob, IncompatibleBlob)
#: Errors whose own message reads as a sentence to the user; others are shown as "TypeName: message".
_PLAIN = (LookupError, SchemaError, RunExists, NotWaiting, StoreError, LeaseHeld, LeaseLost, CannotRetry)


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="S",
        default=None,
        help="store: a SQLite file path, sqlite:///PATH, postgresql://USER:PASS@HOST:PORT/DB or memory: "
        "(default: $AGENTRT_STORE or .agentrt/agentrt.db)",
    )


def add_agent_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        metavar="FILE.py[:ATTR]",
        default=None,
        help="the file of the run's agent, when its module cannot be imported from here (the run was "
        "started in another directory): imported as the module the run was started with",
    )


def load_agent_option(store: Store, run_id: str, args: argparse.Namespace) -> None:
    """``--agent FILE.py[:ATTR]``: import the run's agent module from that file, from any directory."""
    if getattr(args, "agent", None) is None:
        return
    from agentrt._sdk.agent import load_agent_of_run

    rec = store.get_run(run_id)
    if rec is not None:
        load_agent_of_run(rec.agent, args.agent)


def add_output_options(parser: argparse.ArgumentParser, *, log_format: bool = True) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object with the result on stdout")
    if log_format:
        parser.add_argument(
            "--log-format",
            choices=("auto", "pretty", "json", "none"),
            default="auto",
            help="progress on stderr: auto = live lines on a terminal, otherwise structlog JSON lines of "
            "warnings and errors only (-v: of every event); json = JSON lines of every event",
        )
        parser.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="when stderr is not a terminal, log every event of the run as JSON, not only warnings "
            "and errors",
        )


def add_runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executors",
        metavar="MODULE:ATTR",
        default=None,
        help="the model executors for task.llm requests: an agentrt.llm.Executors, an object with "
        "generate_text/stream_text/decide, or a zero-argument factory of one (default $AGENTRT_EXECUTORS)",
    )
    parser.add_argument(
        "--max-model-calls",
        type=int,
        metavar="N",
        default=None,
        help="fail a run that asks for more than N model calls (default 100)",
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        default=None,
        help="append the run's trace (run/request/chunk/result/checkpoint/emit/end events) to FILE as JSONL",
    )
    parser.add_argument(
        "--step-budget",
        type=float,
        metavar="SECONDS",
        default=None,
        help="stop an agent computing longer than this between two awaits (AR110; 0 = no limit; "
        "default $AGENTRT_STEP_BUDGET or 5)",
    )


def fail(message: str, code: int) -> int:
    """Report an error as one line on stderr (never a traceback) and return its exit status.  A
    message that quotes a library's several lines (psycopg's "connection refused" and its "Is the
    server running...?") is folded onto that one line."""
    print(f"agentrt: error: {one_line(message)}", file=sys.stderr)
    return code


def one_line(text: str) -> str:
    """``text`` with its line breaks (and the indentation after them) folded into single spaces."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def exit_status(exc: Exception, args: argparse.Namespace | None = None) -> tuple[int, str]:
    """The exit status and the one-line message for an error that ended a command (the one table),
    with what to type on the command line added to an error that speaks the Python API."""
    from agentrt._cli.hints import cli_hint, cli_message

    if isinstance(exc, AgentrtError):
        usage = isinstance(exc, _USAGE_ERRORS) and not isinstance(exc, _HOST_ERRORS)
        code = EXIT_USAGE if usage else EXIT_HOST
        message = cli_message(exc, args)
        if message is not None:
            return code, message
        text = str(exc) if isinstance(exc, _PLAIN) else f"{type(exc).__name__}: {exc}"
        return code, text + cli_hint(exc, args)
    if isinstance(exc, OSError):  # a file named on the command line
        where = f": {exc.filename}" if exc.filename else ""
        return EXIT_USAGE, f"{exc.strerror or exc}{where}"
    return EXIT_HOST, f"unexpected {type(exc).__name__}: {exc} (please report this)"


def guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run a command handler: whatever ends it becomes one line on stderr and a status of the table."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except KeyboardInterrupt:
            print(
                "agentrt: interrupted; a run in progress stays resumable (agentrt resume RUN_ID)",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        except BrokenPipeError:  # `agentrt dump ID | head`: the reader is gone, say nothing more
            from agentrt.cli import output_closed

            return output_closed()
        except Exception as exc:
            code, message = exit_status(exc, args)
            return fail(message, code)

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


def open_cli_store(args: argparse.Namespace, *, read_only: bool = False, create: bool = True) -> Store:
    """The store of ``--store`` / ``AGENTRT_STORE``.  ``read_only`` for the commands that only look,
    which never create or alter a store; ``create=False`` for those that act on existing runs.  Where
    either finds no store it is ``StoreNotFound`` (exit status 3), not a new empty store."""
    return open_store(getattr(args, "store", None), read_only=read_only, create=create)


def parse_json_arg(text: str, option: str) -> Any:
    if text.startswith("@"):
        path = text[1:]
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise SchemaError(option, f"cannot read {path!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(
            option, f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}): {text[:80]!r}"
        ) from None


def step_budget(args: argparse.Namespace) -> float | None:
    value = args.step_budget
    if value is None:
        value = float(os.environ.get("AGENTRT_STEP_BUDGET", "5"))
    return value if value > 0 else None


def executors(args: argparse.Namespace) -> Executors | None:
    """The executors named by ``--executors`` / ``$AGENTRT_EXECUTORS`` (None: the runtime has none)."""
    from agentrt._sdk.agent import load_object
    from agentrt.llm import as_executors

    spec = getattr(args, "executors", None) or os.environ.get("AGENTRT_EXECUTORS")
    if not spec:
        return None
    value = load_object(spec, what="executors")
    try:
        return as_executors(value)
    except TypeError as exc:
        raise AgentSpecError(f"--executors {spec}: {exc}") from None


def lease_seconds() -> float:
    return float(os.environ.get("AGENTRT_LEASE_SECONDS", "10"))


# ---------------------------------------------------------------------------- results


def show_prompt(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False)


def print_result(rec: RunRecord, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    obj = result_object(rec)
    if as_json:
        print(json.dumps(obj, indent=None, sort_keys=False), file=out)
    else:
        if rec.status == "completed":
            print(f"run {rec.run_id} completed", file=out)
            print(json.dumps(rec.output, indent=2, ensure_ascii=False), file=out)
        elif rec.status == "failed":
            error = rec.error or {}
            print(f"run {rec.run_id} failed: {error.get('type')}: {error.get('message')}", file=out)
        elif rec.status == "cancelled":
            print(f"run {rec.run_id} was cancelled", file=out)
        elif rec.status == "queued":
            print(f"run {rec.run_id} is queued for a worker (agentrt worker)", file=out)
        elif rec.status == "blocked":
            print(f"run {rec.run_id} is blocked at checkpoint {rec.seq}: {blocked_text(rec)}", file=out)
            print(
                f"  fix the code, then: agentrt resume {rec.run_id} (or agentrt retry {rec.run_id})", file=out
            )
        elif rec.status == "waiting":
            pending = rec.pending or {}
            if rec.waiting_on == "reply" or pending.get("kind") == "ask":
                print(
                    f"run {rec.run_id} is waiting for a reply: {show_prompt(pending.get('prompt'))}", file=out
                )
                print(f"  reply with: agentrt resume {rec.run_id} --reply JSON", file=out)
            else:
                print(f"run {rec.run_id} is waiting ({rec.waiting_on})", file=out)
                print(f"  continue with: agentrt resume {rec.run_id}", file=out)
        else:
            print(
                f"run {rec.run_id} is {rec.status} at seq {rec.seq}; "
                f"continue with: agentrt resume {rec.run_id}",
                file=out,
            )
    if rec.status in ("failed", "blocked"):
        return EXIT_FAILED
    return EXIT_OK


def blocked_text(rec: RunRecord) -> str:
    """A blocked run's finding in one line: its message (which names the code, function and line)."""
    finding = rec.blocked or {}
    return str(finding.get("message") or "no finding recorded")


# ---------------------------------------------------------------------------- live progress and logs


#: The JSON log levels, in order; ``Progress`` writes the lines at or above its threshold.
_LEVELS = ("debug", "info", "warning", "error")


class Progress:
    """Trace observer: live lines on a terminal, or structlog JSON lines.

    ``auto`` (the default) is live lines on a terminal; elsewhere (a pipe, CI, a file) a run
    that goes well prints nothing on stderr, and only warnings and errors are logged, as
    JSON, unless ``verbose`` or ``json`` asks for every event.
    """

    def __init__(self, mode: str, stream: TextIO | None = None, *, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.threshold = "debug"
        if mode == "auto":
            mode = "pretty" if self.stream.isatty() else "json"
            if mode == "json" and not verbose:
                self.threshold = "warning"
        self.mode = mode
        self._logger: Any = None
        if mode == "json":
            import structlog

            self._logger = structlog.wrap_logger(
                structlog.PrintLogger(self.stream),
                processors=[
                    structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True),
                    structlog.processors.JSONRenderer(default=repr),
                ],
            )
        self._started = time.monotonic()
        self._streaming: tuple[Any, ...] | None = None  # the request whose chunks are being printed

    def __call__(self, event: TraceEvent) -> None:
        if self.mode == "none":
            return
        if self.mode == "json":
            data = dict(event.data)
            level = data.pop("level", None) if event.kind == "log" else None
            method = {
                "failed": "error",
                "blocked": "error",
                "driver_error": "error",
                "lease_lost": "warning",
            }.get(event.kind, "info")
            if event.kind == "log" and level in ("debug", "info", "warning", "error"):
                method = level
            # Chunks are many and small: debug level, so a JSON log stays readable at info.
            method = "debug" if event.kind == "model_chunk" else method
            if _LEVELS.index(method) < _LEVELS.index(self.threshold):
                return
            getattr(self._logger, method)(event.kind, run_id=event.run_id, **data)
            return
        if event.kind == "model_chunk":
            self._stream_chunk(event)
            return
        line = self._pretty(event)
        if line:
            if self._streaming is not None:  # end the streamed text's line first
                print(file=self.stream)
                self._streaming = None
            elapsed = time.monotonic() - self._started
            print(f"[{elapsed:6.2f}s] {line}", file=self.stream, flush=True)

    def _stream_chunk(self, event: TraceEvent) -> None:
        """Streamed model text, live, on one line per request (what a terminal user expects to see)."""
        key = (event.run_id, event.data.get("seq"), event.data.get("idx"))
        if self._streaming != key:
            if self._streaming is not None:
                print(file=self.stream)
            elapsed = time.monotonic() - self._started
            src = event.data.get("src")
            print(f"[{elapsed:6.2f}s]   ~ {event.run_id}: {src}: ", end="", file=self.stream)
            self._streaming = key
        print(str(event.data.get("chunk", "")).replace("\n", " "), end="", file=self.stream, flush=True)

    def _pretty(self, e: TraceEvent) -> str | None:
        d = e.data
        run = e.run_id
        if e.kind == "started":
            return f"▶ run {run} started ({d.get('agent')})"
        if e.kind == "resumed":
            return f"▶ run {run} resumed from checkpoint {d.get('seq')}"
        if e.kind == "child_started":
            return f"▶ sub-run {run} of {d.get('parent')} started ({d.get('agent')})"
        if e.kind == "tool_started":
            return f"  → {run}: {d.get('tool')} (key {d.get('key')})"
        if e.kind == "tool_finished":
            mark = "✓" if d.get("ok") else "✗"
            extra = "" if d.get("ok") else f" {d.get('error')}"
            return f"  {mark} {run}: {d.get('tool')} {d.get('seconds', 0):.2f}s{extra}"
        if e.kind == "model_request":
            model = f" [{d.get('model')}]" if d.get("model") else ""
            return f"  → {run}: llm.{d.get('method')} {d.get('src')}{model}"
        if e.kind == "model_result":
            mark = "✓" if d.get("ok") else "✗"
            tokens = (d.get("usage") or {}).get("total_tokens", 0)
            extra = "" if d.get("ok") else f" {d.get('error')}"
            return (
                f"  {mark} {run}: llm.{d.get('method')} {d.get('src')} {d.get('seconds', 0):.2f}s, "
                f"{d.get('calls')} call(s), {tokens} tokens{extra}"
            )
        if e.kind == "notify":
            msg = d.get("message") or json.dumps({k: v for k, v in d.items() if k != "level"})
            pct = f" ({d['percent']:g}%)" if d.get("percent") is not None else ""
            return f"  · {run}: {msg}{pct}"
        if e.kind == "log":
            return f"  [{d.get('level')}] {run}: {d.get('message')}"
        if e.kind == "emit":
            return f"  ◆ {run}: {d.get('type')} {json.dumps(d.get('data'))}"
        if e.kind == "waiting":
            if d.get("waiting_on") == "reply":
                return f"⏸ run {run} waits for a reply: {show_prompt(d.get('prompt'))}"
            return f"⏸ run {run} waits ({d.get('waiting_on')})"
        if e.kind == "completed":
            return f"✔ run {run} completed"
        if e.kind == "failed":
            err = d.get("error") or {}
            return f"✘ run {run} failed: {err.get('type')}: {err.get('message')}"
        if e.kind == "blocked":
            finding = d.get("blocked") or {}
            return f"⛔ run {run} is blocked at checkpoint {d.get('seq')}: {finding.get('message')}"
        if e.kind == "retried":
            return f"↻ run {run} retried from checkpoint {d.get('from_seq')} (now checkpoint {d.get('seq')})"
        if e.kind in ("driver_error", "lease_lost"):
            return f"! run {run}: {d.get('error') or d.get('message')}"
        if e.kind == "released":
            return f"↩ run {run} left for a worker with its code: {d.get('reason')}"
        return None
