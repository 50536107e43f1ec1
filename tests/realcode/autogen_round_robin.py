"""Ports AutoGen AgentChat's "Teams" tutorial (autogen-agentchat ``RoundRobinGroupChat`` of a
``primary`` ``AssistantAgent`` and a ``critic`` that replies "APPROVE" when satisfied, ended by
``TextMentionTermination("APPROVE")``, run with ``team.run(task=...)`` returning a ``TaskResult``
of ``TextMessage``s and a ``stop_reason``).

autogen is not installed: the message classes (pydantic models), the termination condition (with
its ``|`` combinator and ``MaxMessageTermination``), the agents and the group chat are small
stand-ins in its style.  Each agent's model call is the suspension; the team, its message thread
and the termination condition cross every await.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from tests.realcode._driver import model, script
from tests.realcode._registry import port

AGENT = "autogen_round_robin"


class TextMessage(BaseModel):
    source: str
    content: str
    models_usage: dict[str, int] | None = None
    type: str = "TextMessage"


class StopMessage(BaseModel):
    content: str
    source: str


class TaskResult(BaseModel):
    messages: list[TextMessage]
    stop_reason: str | None = None


class TerminationCondition:
    def __or__(self, other: TerminationCondition) -> OrTerminationCondition:
        return OrTerminationCondition(self, other)

    def check(self, messages: list[TextMessage]) -> StopMessage | None:
        raise NotImplementedError


@dataclass
class TextMentionTermination(TerminationCondition):
    text: str

    def check(self, messages: list[TextMessage]) -> StopMessage | None:
        for message in messages:
            if self.text in message.content:
                return StopMessage(content=f"Text '{self.text}' mentioned", source="TextMentionTermination")
        return None


@dataclass
class MaxMessageTermination(TerminationCondition):
    max_messages: int
    _count: int = 0

    def check(self, messages: list[TextMessage]) -> StopMessage | None:
        self._count += len(messages)
        if self._count >= self.max_messages:
            return StopMessage(
                content=f"Maximum number of messages {self.max_messages} reached",
                source="MaxMessageTermination",
            )
        return None


@dataclass
class OrTerminationCondition(TerminationCondition):
    left: TerminationCondition
    right: TerminationCondition

    def check(self, messages: list[TextMessage]) -> StopMessage | None:
        return self.left.check(messages) or self.right.check(messages)


@dataclass
class AssistantAgent:
    name: str
    system_message: str = "You are a helpful AI assistant."
    model_context: list[dict[str, str]] = field(default_factory=list)

    async def on_messages(self, messages: list[TextMessage]) -> TextMessage:
        for m in messages:
            self.model_context.append({"role": "user", "content": f"{m.source}: {m.content}"})
        reply = await model(AGENT, agent=self.name, system=self.system_message, messages=self.model_context)
        self.model_context.append({"role": "assistant", "content": reply["content"]})
        return TextMessage(source=self.name, content=reply["content"], models_usage=reply["usage"])


@dataclass
class RoundRobinGroupChat:
    participants: list[AssistantAgent]
    termination_condition: TerminationCondition

    async def run(self, task: str) -> TaskResult:
        thread = [TextMessage(source="user", content=task)]
        seen = {p.name: 0 for p in self.participants}  # the group chat broadcasts; each agent buffers
        turn = 0
        while True:
            speaker = self.participants[turn % len(self.participants)]
            turn += 1
            response = await speaker.on_messages(thread[seen[speaker.name] :])
            thread.append(response)
            seen[speaker.name] = len(thread)
            stop = self.termination_condition.check([response])
            if stop is not None:
                return TaskResult(messages=thread, stop_reason=stop.content)


@port(
    "Write a short poem about the fall season.",
    example="AutoGen AgentChat tutorial: Teams (RoundRobinGroupChat primary/critic, TextMentionTermination)",
    answer="Text 'APPROVE' mentioned",
)
async def main(task: str) -> tuple[Any, ...]:
    primary_agent = AssistantAgent("primary", system_message="You are a helpful AI assistant.")
    critic_agent = AssistantAgent(
        "critic",
        system_message=(
            "Provide constructive feedback. Respond with 'APPROVE' when your feedbacks are addressed."
        ),
    )
    text_termination = TextMentionTermination("APPROVE")
    team = RoundRobinGroupChat(
        [primary_agent, critic_agent], termination_condition=text_termination | MaxMessageTermination(10)
    )
    result = await team.run(task=task)
    return (
        result.stop_reason,
        [m.content for m in result.messages],
        result,
        team.participants[0].model_context,
    )


@script(AGENT)
def _script(kind: str, request: Any) -> Any:
    agent, history = request["agent"], request["messages"]
    usage = {"prompt_tokens": 30 * len(history), "completion_tokens": 20}
    drafts = sum(1 for m in history if m["role"] == "assistant")
    if agent == "primary":
        if drafts == 0:
            return {
                "content": "Leaves of amber drift and fall,\nwhispers of the autumn call.",
                "usage": usage,
            }
        return {
            "content": "Leaves of amber, crimson, gold,\ndrift and settle, brave and bold.",
            "usage": usage,
        }
    if drafts == 0:
        return {"content": "Nice imagery; add more colours and a stronger rhythm.", "usage": usage}
    return {"content": "Much better. APPROVE", "usage": usage}
