"""The agents a runtime knows, by spec: those it was given and those it imported for stored runs.

A run row names its agent by spec (``module:name``, :func:`~agentrt._sdk.agent.agent_spec`).  A
worker imports the module of a run it claims; an agent that cannot be imported by name (defined in
a function, say) gets a local spec, and this registry is the only way back to it: only the runtime
that started such a run can drive it.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentrt._sdk.agent import Agent, agent_spec, load_agent
from agentrt.exceptions import AgentSpecError
from agentrt.stores.base import RunRecord

__all__ = ["LOCAL_PREFIX", "AgentRegistry", "spec_of"]

#: The spec prefix of an agent that cannot be imported by name.
LOCAL_PREFIX = "<local>:"


def spec_of(agent: Agent) -> str:
    """The spec a run of ``agent`` is stored under (a local one if it cannot be imported by name)."""
    return agent_spec(agent) or f"{LOCAL_PREFIX}{agent.name}@{id(agent):x}"


class AgentRegistry:
    """Agent spec -> agent, for one runtime."""

    def __init__(self) -> None:
        self._by_spec: dict[str, Agent] = {}

    @property
    def loaded(self) -> Mapping[str, Agent]:
        return self._by_spec

    def register(self, agent: Agent, spec: str | None = None) -> str:
        """Remember ``agent`` under ``spec`` (default: its own) and return the spec."""
        spec = spec or spec_of(agent)
        self._by_spec.setdefault(spec, agent)
        return spec

    def agent_of(self, rec: RunRecord) -> Agent:
        """The agent of a stored run (imports its module if needed)."""
        agent = self._by_spec.get(rec.agent)
        if agent is not None:
            return agent
        if rec.agent.startswith(LOCAL_PREFIX):
            raise AgentSpecError(
                f"run {rec.run_id!r} was started with an agent that cannot be imported by name "
                f"({rec.agent[len(LOCAL_PREFIX) :]}), so only the runtime that started it can drive it; "
                "define the agent at module level (name = agent(...)) to resume it anywhere"
            )
        agent = load_agent(rec.agent)
        self._by_spec[rec.agent] = agent
        return agent
