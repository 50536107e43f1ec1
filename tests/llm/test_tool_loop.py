"""``generate_with_tools``: the model-calls-tools loop as durable agent code."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from agentrt import MemoryStore, Runtime
from agentrt.llm import ModelToolCall, Scripted, ScriptedExecutors, ToolLoopExhausted, Usage
from agentrt.llm._needs import needs_of
from tests.cli.helpers import cli_env, cli_json, popen, read_side_effects
from tests.llm import agents as A


def drive(agent, input, executors):
    async def main():
        async with Runtime(MemoryStore(), executors=executors) as rt:
            run_id = await rt.start(agent, input)
            return await rt.wait(run_id, timeout=30)

    return asyncio.run(main())


def calls(*items):
    return tuple(ModelToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(items))


def test_tools_run_and_their_results_and_errors_go_back_to_the_model():
    script = ScriptedExecutors(
        {
            "loop": [
                Scripted(
                    "",
                    usage=Usage(10, 2, 12),
                    tool_calls=calls(
                        ("lookup", {"word": "abc"}),
                        ("add", {"a": 1, "b": 2}),
                        ("explode", {"x": "y"}),
                        ("nope", {}),
                        ("add", {"a": "x"}),
                    ),
                ),
                Scripted("all done", usage=Usage(20, 3, 23)),
            ]
        }
    )
    out = drive(A.looper, {"text": "go", "n": 3}, script)
    assert out == A.Answer("all done", ["35"])
    first, second = script.calls
    assert first.system == "Use the tools." and [t["name"] for t in first.tools] == [
        "lookup",
        "add",
        "explode",
    ]
    assert first.messages == ({"role": "user", "content": "go"},)
    assistant, *results = second.messages[1:]
    assert assistant["role"] == "assistant" and [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "lookup", "add", "explode", "nope", "add",
    ]  # fmt: skip
    assert [(r["tool_call_id"], r["content"]) for r in results] == [
        ("c0", "ABC"),
        ("c1", "3"),
        ("c2", "error: ValueError: boom y"),
        ("c3", "error: there is no tool 'nope'; the tools are lookup, add, explode"),
        ("c4", "error: TypeError: add() missing 1 required positional argument: 'b'"),
    ]


def test_a_model_that_never_stops_asking_for_tools_is_cut_off():
    script = ScriptedExecutors(
        {"loop": [Scripted("", tool_calls=calls(("add", {"a": i, "b": 1}))) for i in range(2)]}
    )

    async def main():
        async with Runtime(MemoryStore(), executors=script) as rt:
            run_id = await rt.start(A.looper, {"n": 2})
            with pytest.raises(ToolLoopExhausted) as info:
                await rt.wait(run_id, timeout=30)
            return info.value

    error = asyncio.run(main())
    assert error.max_steps == 2 and error.src == "loop" and len(error.messages) == 5
    assert "max_steps" in str(error)


def test_the_bind_time_scan_sees_the_helpers_model_calls():
    assert [(n.kind, n.function) for n in needs_of(A.looper)] == [("generate_text", "looper_run")]


def test_killed_between_steps_the_loop_resumes_without_re_asking_or_re_running(tmp_path):
    """SIGKILL while the loop's second model call is in flight: after `agentrt resume` in a new
    process, the first model call and the tool are not repeated, and the helper's frame goes on."""
    store, model_log, tool_log = tmp_path / "s.db", tmp_path / "model.jsonl", tmp_path / "tools.jsonl"
    env = cli_env(
        AGENTRT_TEST_MODEL_CALLS=str(model_log),
        AGENTRT_TEST_TOOL_CALLS=str(tool_log),
        AGENTRT_TEST_MODEL_DELAY="2",
    )
    args = ("--store", str(store), "--executors", "tests.llm.counting:tool_loop", "--log-format", "none")
    proc = popen(
        "run",
        "tests.llm.agents:looper",
        "--input",
        '{"text": "sum", "n": 3}',
        "--run-id",
        "L",
        *args,
        env=env,
    )
    deadline = time.monotonic() + 60
    while len(read_side_effects(model_log)) < 2:  # the second model call has started
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    fast = cli_env(AGENTRT_TEST_MODEL_CALLS=str(model_log), AGENTRT_TEST_TOOL_CALLS=str(tool_log))
    code, out, err = cli_json("resume", "L", *args, env=fast)
    assert code == 0, err
    assert out["output"] == {"text": "the sum is 5", "notes": ["4"]}
    keys = [c["key"] for c in read_side_effects(model_log)]
    assert keys == ["L:1.0", "L:3.0", "L:3.0"]  # step 1 once; step 2 (seq 3) was in flight: asked again
    assert [t["tool"] for t in read_side_effects(tool_log)] == ["add"]  # the tool ran once
