"""Advisor escalation: when a lane asks for one powerful sub-answer, and how many it may ask.

Three triggers (any one fires): the envelope says ``status: escalate`` with an ``escalate_reason``;
the output contains a configured marker phrase (``models.escalationMarkers``); or the output is
shorter than ``models.shortOutputThreshold`` for that task type and tier (only when one is set).
The advisor sees the draft, the question and a short critique instruction -- never the lane's
context bundle -- and ``advisor_rounds`` (default 2) caps consults per lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any  # Any: YAML configuration of any shape, checked here

import attrs

from agentrt._codec import serializable
from agentrt.exceptions import ContractError
from agentrt.teams.contracts import Handoff

__all__ = [
    "CRITIQUE_INSTRUCTION",
    "INCONCLUSIVE",
    "EscalationConfig",
    "advisor_prompt",
    "escalation_trigger",
]

INCONCLUSIVE = "inconclusive: advisor budget exhausted"
CRITIQUE_INSTRUCTION = (
    "You are the advisor. Answer the question about the draft below in at most five sentences: "
    "say what is wrong or missing and what to do instead. Do not rewrite the draft."
)


@serializable  # a lane holds it across its model calls
@attrs.frozen
class EscalationConfig:
    """``models.escalationMarkers``, ``models.shortOutputThreshold`` and ``models.advisorRounds``.

    ``short_output`` maps ``"<work_type>/<tier>"`` to a minimum output length in characters.
    """

    markers: tuple[str, ...] = ()
    short_output: Mapping[str, int] = attrs.field(factory=dict)
    advisor_rounds: int = 2

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.advisor_rounds, int) or self.advisor_rounds < 0:
            raise ContractError(
                "models.advisorRounds", None, f"must be an integer >= 0, got {self.advisor_rounds!r}"
            )

    @classmethod
    def from_config(cls, models: Mapping[str, Any] | None) -> EscalationConfig:
        models = models or {}
        return cls(
            markers=tuple(models.get("escalationMarkers") or ()),
            short_output=dict(models.get("shortOutputThreshold") or {}),
            advisor_rounds=int(models.get("advisorRounds", 2)),
        )


def escalation_trigger(
    output: str,
    *,
    work_type: str,
    tier: str,
    config: EscalationConfig,
    handoff: Handoff | None = None,
) -> str | None:
    """Why this output needs the advisor, or ``None``; the first trigger that fires wins."""
    if handoff is not None and handoff.status == "escalate":
        return f"status escalate: {handoff.escalate_reason}"
    lowered = output.lower()
    for marker in config.markers:
        if marker and marker.lower() in lowered:
            return f"marker phrase {marker!r} in output"
    threshold = config.short_output.get(f"{work_type}/{tier}")
    if threshold is not None and len(output.strip()) < threshold:
        return f"output of {len(output.strip())} chars is shorter than {threshold} for {work_type}/{tier}"
    return None


def advisor_prompt(draft: str, question: str) -> str:
    """All the advisor sees: the critique instruction, the question and the draft."""
    return f"{CRITIQUE_INSTRUCTION}\n\nQuestion: {question}\n\nDraft:\n{draft}"
