"""Model executors for the examples, bound with ``--executors`` (or ``Runtime(executors=...)``).

- ``offline``: deterministic stand-ins, no model, no network: ``generate_text`` is an extractive
  summarizer (the first sentence of the prompt's text, then the sentences that mention the words
  the text repeats most); ``decide`` chooses a priority from the ``Labels:`` line of the prompt.
  Offered tools (an ``llm_agent``: ``examples/issue_researcher.py``), it works like a careful
  model would: :func:`research_turn` fetches the issue and its comments in one turn, then submits.
- ``openai``: :class:`~agentrt.llm.openai_compat.OpenAICompatExecutors` against the
  OpenAI-compatible endpoint at ``$AGENTRT_EXAMPLE_OPENAI_URL`` (``make demo`` starts a local
  stand-in, :class:`agentrt.testing.openai_server.FakeOpenAIServer`; point it at a real
  provider with ``$AGENTRT_EXAMPLE_OPENAI_KEY`` and ``$AGENTRT_EXAMPLE_MODEL``).

Both log each call to ``$AGENTRT_EXAMPLE_SIDE_EFFECTS`` (when set), so the crash demo can show
which process asked the model what.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Awaitable
from typing import Any

from agentrt.llm import ExecutorRequest, Executors, GenerateResult, ModelToolCall, Usage

_STOP = frozenset(
    {"the", "a", "an", "and", "or", "of", "to", "in", "on", "is", "it", "for", "with", "when", "not", "this"}
    | {"that", "be", "as", "at", "by", "from", "set", "any"}
)


def _side_effect(request: ExecutorRequest) -> None:
    path = os.environ.get("AGENTRT_EXAMPLE_SIDE_EFFECTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": f"llm {request.src}", "key": request.id, "pid": os.getpid()}) + "\n")


def summarize(text: str, max_sentences: int = 2) -> str:
    """An extractive summary: the first sentence, then the ones richest in the text's top words."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    if not sentences:
        return ""
    words = Counter(w for w in re.findall(r"[a-z_]+", text.lower()) if w not in _STOP and len(w) > 2)
    top = {w for w, _ in words.most_common(5)}

    def score(s: str) -> int:
        return sum(1 for w in re.findall(r"[a-z_]+", s.lower()) if w in top)

    chosen = [sentences[0]]
    for s in sorted(sentences[1:], key=score, reverse=True):
        if len(chosen) >= max_sentences:
            break
        chosen.append(s)
    chosen.sort(key=sentences.index)
    return " ".join(chosen)


def research_turn(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The issue researcher's next tool calls, ``[(name, arguments)]``, read from the conversation
    (chat messages in OpenAI's shape, as agentrt sends them and a provider receives them): first
    fetch the issue and its comments together, then ``submit`` a report built from what they said."""
    first = next(m for m in messages if m.get("role") == "user")
    task = json.loads(first["content"])
    names = {
        call["id"]: call["function"]["name"]
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or ()
    }
    results = {
        names.get(m.get("tool_call_id"), ""): m.get("content") for m in messages if m.get("role") == "tool"
    }
    if "github_issues_get" not in results:
        owner, repo = task["repo"].split("/", 1)
        where = {"owner": owner, "repo": repo, "issue_number": task["issue_number"]}
        return [("github_issues_get", where), ("github_issues_list_comments", where)]
    issue = json.loads(results["github_issues_get"])
    comments = json.loads(results.get("github_issues_list_comments") or "[]")
    workaround = next(
        (c["body"].split(":", 1)[-1].strip() for c in comments if "workaround" in c["body"].lower()), None
    )
    report = {
        "issue_number": issue["number"],
        "summary": summarize(f"{issue['title']}. {issue['body']}", 2),
        "workaround": workaround,
        "comment_count": len(comments),
    }
    return [("submit", report)]


async def _offline_generate(request: ExecutorRequest) -> GenerateResult:
    _side_effect(request)
    if request.tools:  # an llm_agent's turn
        calls = research_turn(request.chat_messages())
        tool_calls = tuple(
            ModelToolCall(f"call-{request.seq}-{n}", name, args) for n, (name, args) in enumerate(calls)
        )
        return GenerateResult(output="", usage=Usage(1, 1, 2), tool_calls=tool_calls, model="offline-agent")
    prompt = request.prompt or str(request.messages[-1].get("content", ""))
    text = prompt.split("\n\n", 1)[-1]  # drop the instruction line
    summary = summarize(text, int(request.metadata.get("max_sentences", 2)))
    usage = Usage(len(prompt.split()), len(summary.split()), len(prompt.split()) + len(summary.split()))
    return GenerateResult(output=summary, usage=usage, model="offline-extractive")


async def _offline_decide(request: ExecutorRequest) -> dict[str, Any]:
    """Choose by rule, as a stand-in model would by judgement: the labels on the prompt's last line
    (``Labels: a, b``) decide; the first event that fits is the choice."""
    _side_effect(request)
    prompt = request.prompt or ""
    labels = (
        {label.strip() for label in prompt.rsplit("Labels:", 1)[-1].split(",")}
        if "Labels:" in prompt
        else set()
    )
    wanted = "High" if labels & {"regression", "security"} else "Normal" if "bug" in labels else "Low"
    names = [event.type for event in request.events]
    chosen = wanted if wanted in names else names[-1]
    return {"event": {"type": chosen, "reason": f"labels: {', '.join(sorted(labels)) or 'none'}"}}


offline = Executors(generate_text=_offline_generate, decide=_offline_decide)


def openai() -> Any:
    """The OpenAI-compatible executor for ``$AGENTRT_EXAMPLE_OPENAI_URL`` (a zero-argument factory:
    ``--executors`` calls it, so nothing connects at import)."""
    from agentrt.llm.openai_compat import OpenAICompatExecutors

    url = os.environ.get("AGENTRT_EXAMPLE_OPENAI_URL")
    if not url:
        raise RuntimeError(
            "examples/executors.py:openai needs $AGENTRT_EXAMPLE_OPENAI_URL (an OpenAI-compatible base URL, "
            "e.g. http://127.0.0.1:8000/v1 from `python -m agentrt.testing.openai_server`)"
        )
    base = OpenAICompatExecutors(
        url,
        api_key=os.environ.get("AGENTRT_EXAMPLE_OPENAI_KEY"),
        models={"quick": os.environ.get("AGENTRT_EXAMPLE_MODEL", "gpt-4o-mini")},
        default_model="quick",
        timeout=30.0,
    )

    def generate_text(request: ExecutorRequest) -> Awaitable[GenerateResult]:
        # A plain function returning the executor's coroutine: host code, never checkpointed.
        _side_effect(request)
        return base.generate_text(request)

    return Executors(generate_text=generate_text, stream_text=base.stream_text, decide=base.decide)
