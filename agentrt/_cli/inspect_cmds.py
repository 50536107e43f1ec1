"""``agentrt runs`` and ``agentrt show``: read-only views of the store."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any  # Any: JSON documents

from agentrt._cli.common import (
    add_store_option,
    blocked_text,
    guarded,
    open_cli_store,
    show_object,
    show_prompt,
)
from agentrt.exceptions import RunNotFound
from agentrt.stores.base import STATUSES, RunRecord
from agentrt.stores.views import listing_object


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    runs = commands.add_parser(
        "runs", help="list runs", description="List the runs in the store, newest first."
    )
    runs.add_argument("--status", choices=STATUSES, default=None, help="only runs with this status")
    runs.add_argument(
        "--limit", type=int, default=50, metavar="N", help="at most N runs (default 50; 0 = all)"
    )
    runs.add_argument(
        "--json",
        action="store_true",
        help='print {"runs": [{"run_id", "status", "agent", "interrupted", ...}]}',
    )
    add_store_option(runs)
    runs.set_defaults(handler=guarded(cmd_runs))

    show = commands.add_parser(
        "show",
        help="status, output or error, pending request, checkpoint history",
        description="Show one run: status, output or error, the request it waits on, its checkpoint "
        "history and its latest events.  Without ID: the store itself (its location and store_id, "
        "the identity every blob of the store is sealed for).",
    )
    show.add_argument("run_id", metavar="ID", nargs="?", default=None, help="the run (omitted: the store)")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.add_argument(
        "--events", type=int, default=20, metavar="N", help="show the last N events (default 20)"
    )
    add_store_option(show)
    show.set_defaults(handler=guarded(cmd_show))


def _when(ts: float | None) -> str:
    if not ts:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


#: The width of the DETAIL column of ``agentrt runs`` (``agentrt show ID`` has the whole text).
DETAIL_WIDTH = 70


def clip(text: str, width: int = DETAIL_WIDTH) -> str:
    """``text`` on one line in at most ``width`` characters, cut after a whole word with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    if space >= width // 2:  # a word boundary not too far back; else cut the one long word
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _detail(rec: RunRecord) -> str:
    return clip(_full_detail(rec))


def damaged_text(rec: RunRecord) -> str:
    """How a damaged row is named: its column and why it could not be read."""
    column, why = rec.damaged or ("?", "?")
    return f"damaged: column {column}: {why}"


def _full_detail(rec: RunRecord) -> str:
    if rec.damaged is not None:
        return damaged_text(rec)
    if rec.status == "failed":
        err = rec.error or {}
        return f"{err.get('type')}: {err.get('message')}"
    if rec.status == "completed":
        return json.dumps(rec.output)
    if rec.status == "cancelled":
        return "cancelled"
    if rec.status == "queued":
        return "queued for a worker" + (f" (priority {rec.priority})" if rec.priority else "")
    if rec.status == "blocked":
        return f"blocked at seq {rec.seq}: {blocked_text(rec)}"
    pending = rec.pending or {}
    kind = pending.get("kind")
    if rec.status == "waiting":
        if rec.waiting_on == "reply":
            return f"waiting for a reply: {show_prompt(pending.get('prompt'))}"
        return f"waiting ({rec.waiting_on})"
    state = "running" if rec.lease_live() else "interrupted: agentrt resume " + rec.run_id
    return f"{state}; seq {rec.seq}" + (f", {kind} {pending.get('name', '')}".rstrip() if kind else "")


def cmd_runs(args: argparse.Namespace) -> int:
    store = open_cli_store(args, read_only=True)
    try:
        runs = store.list_runs(status=args.status, limit=args.limit or None)
        if args.json:
            print(json.dumps({"runs": [{**listing_object(r), "interrupted": r.interrupted} for r in runs]}))
            return 0
        if not runs:
            print(
                "no runs" + (f" with status {args.status}" if args.status else "") + f" in {store.location}"
            )
            return 0
        width = max(6, *(len(r.run_id) for r in runs))
        agents = [r.agent.rsplit("/", 1)[-1] for r in runs]
        awidth = min(max(5, *(len(a) for a in agents)), 48)
        print(f"{'RUN ID':<{width}}  {'STATUS':<9}  {'UPDATED':<19}  {'AGENT':<{awidth}}  DETAIL")
        for r, agent in zip(runs, agents, strict=True):
            print(
                f"{r.run_id:<{width}}  {r.status:<9}  {_when(r.updated_at):<19}  "
                f"{agent[:awidth]:<{awidth}}  {_detail(r)}"
            )
        return 0
    finally:
        store.close()


def cmd_show(args: argparse.Namespace) -> int:
    store = open_cli_store(args, read_only=True)
    try:
        store_id = getattr(store, "store_id", None)
        if args.run_id is None:
            about = {"store": store.location, "store_id": store_id}
            print(json.dumps(about) if args.json else f"store     {store.location}\nstore_id  {store_id}")
            return 0
        rec = store.get_run(args.run_id)
        if rec is None:
            raise RunNotFound(args.run_id, store.location)
        obj = {**show_object(store, rec, events=args.events or None), "store_id": store_id}
        if args.json:
            print(json.dumps(obj))
            return 0
        _print_show(rec, obj)
        return 0
    finally:
        store.close()


def _print_show(rec: RunRecord, obj: dict[str, Any]) -> None:
    print(f"run       {rec.run_id}")
    if rec.damaged is not None:
        print(f"{damaged_text(rec)} (the stored row: that field is shown with its default)")
    print(f"agent     {rec.agent}")
    print(
        f"status    {rec.status}" + ("" if rec.status != "running" or rec.lease_live() else " (interrupted)")
    )
    if rec.parent_id:
        print(f"parent    {rec.parent_id}")
    print(f"created   {_when(rec.created_at)}   updated {_when(rec.updated_at)}")
    print(f"input     {json.dumps(rec.input)}")
    if rec.status == "completed":
        print("output    " + json.dumps(rec.output, indent=2).replace("\n", "\n          "))
    elif rec.status == "failed":
        err = rec.error or {}
        print(f"error     {err.get('type')}: {err.get('message')}")
        if err.get("traceback"):
            print("traceback")
            print("  " + err["traceback"].rstrip().replace("\n", "\n  "))
    else:
        if rec.status == "blocked":
            print(f"blocked   {blocked_text(rec)}")
            message = str((rec.blocked or {}).get("message", ""))
            fix = (
                "fix the code"
                if not message.startswith(("HistoryRefused", "CorruptBlob", "RowDamaged"))
                else ("see why above")
            )
            print(f"          {fix}, then: agentrt resume {rec.run_id} (or agentrt retry {rec.run_id})")
        print(f"pending   seq {rec.seq}: {json.dumps(rec.pending)}")
        if rec.waiting_on:
            print(f"waiting   on {rec.waiting_on}")
        if obj.get("lease_owner"):
            print(f"driven by {obj['lease_owner']}")
    usage = rec.usage
    if usage:
        print(
            f"usage     {usage.get('model_calls', 0)} model call(s), {usage.get('total_tokens', 0)} tokens "
            f"({usage.get('input_tokens', 0)} in, {usage.get('output_tokens', 0)} out)"
        )
    if obj["children"]:
        print("children  " + ", ".join(f"{c['run_id']} ({c['status']})" for c in obj["children"]))
    cps = obj["checkpoints"]
    print(f"checkpoints ({len(cps)} kept)")
    for c in cps[-20:]:
        req = c["request"] or {}
        what = req.get("kind", "?") + (f" {req['name']}" if req.get("name") else "")
        if req.get("kind") == "llm":
            what += f" {req.get('method')} {req.get('src')}"
        print(f"  seq {c['seq']:>5}  {c['size_bytes']:>7} B  {_when(c['created_at'])}  {what}")
    if obj["events"]:
        print(f"events (last {len(obj['events'])})")
        for e in obj["events"]:
            data = e["data"]
            text = data.get("message") if isinstance(data, dict) and "message" in data else json.dumps(data)
            level = f" {e['level']}" if e["level"] else ""
            print(f"  seq {e['seq']:>5}  {e['kind']}{level}: {text}")
