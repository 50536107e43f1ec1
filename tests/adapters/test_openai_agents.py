"""agentrt.adapters.openai_agents: the Agents SDK's documented agents, durable, exact after any SIGKILL.

- in this process: each corpus agent under ``Runtime`` gives what the SDK gives without agentrt
  (output or error, and the same model and tool calls, each once);
- ``test_killed_at_every_call``: each agent run by ``agentrt run`` in a subprocess that SIGKILLs
  itself while call N is in flight, for every N, then ``agentrt resume`` (with ``--reply`` at the
  approval) in fresh processes until it ends: the same output, and the calls of the uninterrupted
  run with exactly the one in flight made again.
"""

from __future__ import annotations

import pytest

pytest.importorskip("agents", reason="agentrt[openai-agents] is not installed")

from tests.adapters import oai_corpus
from tests.adapters._exact import check_in_process, check_killed_at_every_call, kill_cases

#: the cases meant to end in the framework's error (every other one must produce an output)
FAILING = {"homework", "turns"}
CASES = {case.name: case for case in oai_corpus.CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_process_same_as_the_sdk(name, tmp_path, monkeypatch):
    check_in_process(CASES[name], tmp_path, monkeypatch, fails=name in FAILING)


def test_the_corpus_covers_what_the_issue_lists():
    """tools, structured output, handoffs, guardrails, agents as tools, context, approvals: 10 or more."""
    assert len(CASES) >= 10
    assert CASES["approval"].reply is not None


@pytest.mark.slow
@pytest.mark.system
@pytest.mark.parametrize("name", kill_cases(CASES, {"escalation", "math_out", "calendar"}))
def test_killed_at_every_call(name, tmp_path, monkeypatch):
    check_killed_at_every_call(CASES[name], tmp_path, monkeypatch)


def test_an_agent_with_a_model_instance_is_refused():
    from agents import Agent

    from agentrt.adapters.openai_agents import durable

    with pytest.raises(TypeError, match="Model instance"):
        durable(Agent(name="x", model=oai_corpus.FakeModel("x", oai_corpus.say)))


def test_a_journal_that_no_longer_fits_is_refused_even_where_the_sdk_swallows_tool_errors():
    """The Agents SDK turns a tool's exception into text for the model; a tool call whose arguments
    differ from the journal's must still fail the run with AdapterDiverged, not carry on."""
    import asyncio

    from agentrt.adapters import openai_agents as adapter
    from agentrt.adapters._session import _PERFORM, Journal, Outcome, Record, Seam, Sessions
    from agentrt.exceptions import AdapterDiverged

    options = adapter._Options(oai_corpus.weather_agent, None, oai_corpus.RUN_CONFIG, None)

    async def program(request: adapter.OpenAIAgentsInput, session: object) -> object:
        return await adapter._program(options, request, session)

    async def scenario() -> None:
        request = adapter.OpenAIAgentsInput("What's the weather in Tokyo?")
        live, journal = Sessions(program), Journal()
        step = await live.start("r", request)
        model = step.next
        step = await live.answer("r", request, journal, _PERFORM)  # the model asks for get_weather(Tokyo)
        journal.append(Record(model, step.outcome))
        tool = step.next
        assert (tool.kind, tool.name) == ("tool", "get_weather")
        other = Seam("tool", "get_weather", {**tool.detail, "arguments": '{"city": "Paris"}'})
        journal.append(Record(other, Outcome(True, "The weather in Paris is sunny")))
        with pytest.raises(AdapterDiverged, match=r"seam 1 .*Paris.* now"):
            await Sessions(program).answer("r", request, journal, _PERFORM)  # another process

    asyncio.run(scenario())
