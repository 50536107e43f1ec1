"""Agents ported from public examples of other agent frameworks and model SDKs.

Importing this package imports every port (each registers itself with ``@port``); ``PORTS`` lists
them.  The restore worker imports it before restoring, as a host imports its code.  The API keys
are set (if absent) while a port runs, because the SDK clients a blob reopens read them from the
environment (``_run.api_keys``); nothing ever reaches a network.
"""

from tests.realcode import (  # noqa: F401  (imported for their registrations)
    anthropic_orchestrator_workers,
    anthropic_tool_use,
    autogen_round_robin,
    crewai_sequential,
    dspy_react,
    google_adk_weather,
    haystack_agent,
    instructor_retry,
    langchain_tool_calling,
    langgraph_functional_react,
    llamaindex_workflow,
    mcp_client_quickstart,
    openai_agents_airline,
    openai_function_calling,
    openai_responses_tools,
    openai_structured_outputs,
    pydantic_ai_weather,
    react_classic,
    semantic_kernel_lights,
    smolagents_tool_calling,
    support_desk,
    swarm_routines,
)
from tests.realcode._registry import PORTS, Port

__all__ = ["PORTS", "Port"]
