"""A deterministic stand-in for a model call, served as a tool until the executors land.

``summarize`` builds an extractive summary: the first sentence of the text, then the
sentences that mention the words the text repeats most, up to ``max_sentences``.  Same input,
same output, no network.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

from agentrt import tool

_STOP = frozenset(
    {"the", "a", "an", "and", "or", "of", "to", "in", "on", "is", "it", "for", "with", "when", "not", "this"}
    | {"that", "be", "as", "at", "by", "from", "set", "any"}
)


def _side_effect(key: str | None) -> None:
    path = os.environ.get("AGENTRT_EXAMPLE_SIDE_EFFECTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": "summarize", "key": key, "pid": os.getpid()}) + "\n")


@tool
def summarize(text: str, max_sentences: int = 2, idempotency_key: str = "") -> str:
    """Summarize a text in a few sentences (a deterministic extractive model).

    Args:
        text: The text to summarize.
        max_sentences: At most this many sentences.
    """
    _side_effect(idempotency_key)
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
