"""``needs_of`` / ``missing``: the model requests an agent makes, read statically -- and the runtime's
refusal, before any run exists, of an agent whose executor is missing."""

from __future__ import annotations

import asyncio
import os
import weakref

import pytest

import agentrt
from agentrt.llm import Executors, MissingExecutor, ScriptedExecutors, _needs
from agentrt.llm._needs import Need, missing, needs_of
from tests.llm import needs_agents as A
from tests.llm import needs_helpers as H

AGENTS_FILE = os.path.realpath(A.__file__)
HELPERS_FILE = os.path.realpath(H.__file__)
AGENTRT_DIR = os.path.dirname(os.path.realpath(agentrt.__file__))


def line_of(path: str, mark: str) -> int:
    """The line of ``# MARK: <mark>`` in ``path`` (so the tests do not hard-code line numbers)."""
    with open(path, encoding="utf-8") as f:
        hits = [n for n, line in enumerate(f, 1) if line.rstrip().endswith(f"# MARK: {mark}")]
    assert len(hits) == 1, (mark, hits)
    return hits[0]


def summary(needs: list[Need]) -> set[tuple[str, str, str, str, int]]:
    return {(n.agent, n.kind, n.function, os.path.realpath(n.filename), n.lineno) for n in needs}


def test_direct_requests_in_run():
    needs = needs_of(A.direct)
    assert [(n.kind, n.function) for n in needs] == [
        ("generate_text", "direct_run"),
        ("stream_text", "direct_run"),
        ("decide", "direct_run"),
    ]
    assert [n.lineno for n in needs] == [
        line_of(AGENTS_FILE, "direct-generate"),
        line_of(AGENTS_FILE, "direct-stream"),
        line_of(AGENTS_FILE, "direct-decide"),
    ]
    assert all(n.agent == "direct" and os.path.realpath(n.filename) == AGENTS_FILE for n in needs)
    assert needs[0].where == f"direct_run (needs_agents.py:{line_of(AGENTS_FILE, 'direct-generate')})"


def test_nested_closure_and_lambda():
    assert summary(needs_of(A.closure)) == {
        (
            "closure",
            "generate_text",
            "closure_run.<locals>.inner",
            AGENTS_FILE,
            line_of(AGENTS_FILE, "closure-generate"),
        ),
        (
            "closure",
            "stream_text",
            "closure_run.<locals>.<lambda>",
            AGENTS_FILE,
            line_of(AGENTS_FILE, "lambda-stream"),
        ),
    }


def test_module_level_helper_in_same_module():
    assert summary(needs_of(A.same_module)) == {
        (
            "same_module",
            "generate_text",
            "_ask_model",
            AGENTS_FILE,
            line_of(AGENTS_FILE, "same-module-generate"),
        )
    }


def test_helper_imported_with_from_import():
    assert summary(needs_of(A.from_import)) == {
        ("from_import", "decide", "choose", HELPERS_FILE, line_of(HELPERS_FILE, "helper-decide"))
    }


def test_helper_called_as_module_attribute():
    assert summary(needs_of(A.module_attr)) == {
        ("module_attr", "stream_text", "stream_summary", HELPERS_FILE, line_of(HELPERS_FILE, "helper-stream"))
    }


def test_sub_agents_in_tools():
    gen_line = line_of(AGENTS_FILE, "gen-only")
    expected = {("child", "generate_text", "generate_only_run", AGENTS_FILE, gen_line)}
    assert summary(needs_of(A.child)) == expected
    assert summary(needs_of(A.parent)) == expected  # the parent's own run makes no request
    assert summary(needs_of(A.grandparent)) == expected  # through two levels


def test_agent_without_requests():
    assert needs_of(A.plain) == []
    assert missing(A.plain, ()) == []


def test_missing_filters_by_kind():
    left = missing(A.direct, ("generate_text",))
    assert [n.kind for n in left] == ["stream_text", "decide"]
    assert [n.kind for n in missing(A.direct, ("stream_text", "decide"))] == ["generate_text"]
    assert missing(A.direct, ("generate_text", "stream_text", "decide")) == []
    assert len(missing(A.direct, ())) == 3


def test_does_not_scan_libraries_or_agentrt(monkeypatch):
    scanned: list[str] = []
    original = _needs._calls

    def recording(code):
        scanned.append(os.path.realpath(code.co_filename))
        return original(code)

    monkeypatch.setattr(_needs, "_calls", recording)
    monkeypatch.setattr(_needs, "_NEEDS", weakref.WeakKeyDictionary())  # scan afresh
    assert needs_of(A.plain) == []
    # the run and the user helper it calls are scanned ...
    assert AGENTS_FILE in scanned and HELPERS_FILE in scanned
    # ... but not json.dumps (stdlib) nor jsonable_or_repr (agentrt)
    assert not [f for f in scanned if f.startswith(AGENTRT_DIR + os.sep)]
    assert set(scanned) == {AGENTS_FILE, HELPERS_FILE}


def test_an_agent_is_scanned_once(monkeypatch):
    scans: list[str] = []
    original = _needs._calls

    def counting(code):
        scans.append(code.co_qualname)
        return original(code)

    monkeypatch.setattr(_needs, "_calls", counting)
    monkeypatch.setattr(_needs, "_NEEDS", weakref.WeakKeyDictionary())
    first = needs_of(A.plain)
    scanned = len(scans)
    assert scanned > 0
    assert needs_of(A.plain) == first and len(scans) == scanned


# --------------------------------------------------------------------------- the runtime


async def _refused(agent, executors):
    rt = agentrt.Runtime(agentrt.MemoryStore(), executors=executors)
    try:
        with pytest.raises(MissingExecutor) as info:
            await rt.start(agent, {"text": "hi"})
        runs = rt.store.list_runs()
    finally:
        await rt.close()
    return info.value, runs


def test_runtime_refuses_before_any_run():
    async def decide_only(request):
        raise AssertionError("never called")

    exc, runs = asyncio.run(_refused(A.direct, Executors(decide=decide_only)))
    assert runs == []
    gen_line = line_of(AGENTS_FILE, "direct-generate")
    stream_line = line_of(AGENTS_FILE, "direct-stream")
    assert exc.agent == "direct" and exc.method == "generate_text"
    assert exc.where == f"direct_run (needs_agents.py:{gen_line})"
    text = str(exc)
    assert "agent 'direct' calls task.llm.generate_text" in text
    assert f"needs_agents.py:{gen_line}" in text
    assert f"task.llm.stream_text in direct_run (needs_agents.py:{stream_line})" in text
    assert "decide in" not in text  # the runtime has a decide executor
    assert "Executors(generate_text=..., stream_text=...)" in text


def test_runtime_refuses_sub_agent_needs():
    exc, runs = asyncio.run(_refused(A.parent, None))
    assert runs == []
    assert exc.agent == "child" and exc.method == "generate_text"
    assert f"needs_agents.py:{line_of(AGENTS_FILE, 'gen-only')}" in str(exc)


def test_runtime_refuses_helper_needs():
    exc, runs = asyncio.run(_refused(A.from_import, Executors()))
    assert runs == []
    assert exc.method == "decide"
    assert f"needs_helpers.py:{line_of(HELPERS_FILE, 'helper-decide')}" in str(exc)


def test_runtime_runs_when_the_executor_is_present():
    async def main():
        scripted = ScriptedExecutors({"*": ["hello", "again"]})
        rt = agentrt.Runtime(agentrt.MemoryStore(), executors=scripted)
        try:
            direct_child = await rt.start(A.child, {"text": "x"})
            first = await rt.wait(direct_child, timeout=10)
            via_parent = await rt.start(A.parent, {"text": "y"})
            second = await rt.wait(via_parent, timeout=10)
            plain = await rt.start(A.plain, {"text": "z"})
            third = await rt.wait(plain, timeout=10)
            runs = rt.store.list_runs()
        finally:
            await rt.close()
        return first, second, third, runs, scripted

    first, second, third, runs, scripted = asyncio.run(main())
    assert first == A.Out("hello")
    assert second == A.Out("again")
    assert third.text.startswith('{"in": {"text": "z"}')
    assert len(runs) == 4  # child, parent + its child run, plain
    assert [c.prompt for c in scripted.calls] == ["echo x", "echo y"]


def test_plain_agent_needs_no_executors():
    async def main():
        rt = agentrt.Runtime(agentrt.MemoryStore())
        try:
            return await rt.wait(await rt.start(A.plain, {"text": "q"}), timeout=10)
        finally:
            await rt.close()

    assert asyncio.run(main()) == A.Out('{"in": {"text": "q"}, "t": "Q"}')
