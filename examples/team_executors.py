"""Offline, deterministic model executors for the team example (``examples/team_demo.py``).

A lane's model answers a ``LaneDraft`` built from its context bundle's task layer; a brief that
says ``[escalate]`` makes the draft escalate once, until an advisor answer is folded in; the
advisor answers with a short critique.  A reviewer lane (its bundle has review instructions) passes,
unless its brief says ``[block-once]``: then it sends the lane back once with one blocking finding,
and passes once the lane's summary says the review was addressed.  Every answer carries the model
it was asked for, so the routing can be checked, and usage counted in words.

``$AGENTRT_EXAMPLE_SIDE_EFFECTS`` (a file) logs each call with its process id, so the crash test
can tell which process asked what; ``$AGENTRT_TEAM_PAUSE`` (seconds) slows each lane call down so a
test can kill the lead mid-run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any

from agentrt.llm import ExecutorRequest, Executors, GenerateResult, Usage


def _log(request: ExecutorRequest, task_id: str) -> None:
    path = os.environ.get("AGENTRT_EXAMPLE_SIDE_EFFECTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            row = {
                "src": request.src,
                "key": request.id,
                "pid": os.getpid(),
                "model": request.model,
                "task_id": task_id,
            }
            f.write(json.dumps(row) + "\n")


def _task_layer(prompt: str) -> tuple[str, str, str]:
    """(task id, title, brief) from a bundle's ``# Task`` layer."""
    task = prompt.split("\n# Task\n", 1)[-1]
    match = re.search(r"^Lane (\S+): (.*)$", task, re.M)
    task_id, title = (match.group(1), match.group(2)) if match else ("?", "")
    brief = task.split("\n", 2)[-1].split("\n\nUpstream receipts", 1)[0].split("\n# ", 1)[0].strip()
    return task_id, title, brief


def _usage(prompt: str, answer: str) -> Usage:
    n_in, n_out = len(prompt.split()), len(answer.split())
    return Usage(n_in, n_out, n_in + n_out)


async def generate_text(request: ExecutorRequest) -> GenerateResult:
    prompt = request.prompt or ""
    if request.src == "advisor":
        question = prompt.split("Question: ", 1)[-1].split("\n", 1)[0]
        answer = (
            f"Advisor: for '{question}', choose the simplest option that keeps the contract; "
            "say so explicitly."
        )
        _log(request, str(request.metadata.get("task_id", "?")))
        return GenerateResult(output=answer, usage=_usage(prompt, answer), model=request.model)
    task_id, title, brief = _task_layer(prompt)
    _log(request, task_id)
    pause = float(os.environ.get("AGENTRT_TEAM_PAUSE", "0") or 0)
    if pause:
        # host code (an executor), never checkpointed: a plain asyncio sleep is right here
        await asyncio.sleep(pause)  # agentrt: ignore[AR102]
    advised = "# Advisor answer" in prompt
    if "# Review instructions" in prompt:  # a reviewer lane: [block-once] blocks until addressed
        addressed = "review addressed" in prompt
        blocking = [] if addressed or "[block-once]" not in brief else [f"{title}: cover the error path"]
        verdict = {
            "status": "done",
            "summary": f"{task_id}: reviewed, {'changes' if blocking else 'pass'} ({request.model}).",
            "body": f"Review of {title}: " + ("; ".join(blocking) or "no blocking findings."),
            "verdict": "changes_requested" if blocking else "pass",
            "blocking_findings": blocking,
        }
        return GenerateResult(output=verdict, usage=_usage(prompt, json.dumps(verdict)), model=request.model)
    if "[escalate]" in brief and not advised:
        draft: dict[str, Any] = {
            "status": "escalate",
            "summary": f"{task_id}: stuck on a design question.",
            "body": f"Draft for {title}: two ways to do it, unsure which.",
            "escalate_reason": f"which approach fits {title}?",
        }
    else:
        first = brief.split(". ")[0].rstrip(".")
        body = f"Done: {title}. {first}." + (" Followed the advisor's answer." if advised else "")
        draft = {
            "status": "done",
            "summary": f"{task_id}: {title} ({request.model})."
            + (" The review addressed." if "# Review findings" in prompt else ""),
            "body": body,
            "artifacts": [f"{task_id}.md"],
            "learnings": ["the offline model is deterministic"],
        }
    return GenerateResult(output=draft, usage=_usage(prompt, json.dumps(draft)), model=request.model)


offline = Executors(generate_text=generate_text)
