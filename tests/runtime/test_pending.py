"""The runtime's decisions over a pending request, as pure functions: no event loop, no store, no machine."""

from __future__ import annotations

import pytest

from agentrt._runtime.pending import (
    Verdict,
    answered_in_store,
    child_run_id,
    describe_pending,
    idempotency_key,
    members,
    parked_on,
    summarize,
    verdict,
    waits_outside,
)
from agentrt._sdk.llm import ModelCall
from agentrt._sdk.requests import Ask, ChildRun, Fulfilled, Gather, Rejected, Sleep, ToolCall
from agentrt.exceptions import ModelCallBudgetExceeded

TOOL = ToolCall("search", {"q": "x"})
CHILD = ChildRun("helper", {"n": 1})
ASK = Ask("ok?")
SLEEP_SOON = Sleep(until=100.0, seconds=1.0)
SLEEP_LATE = Sleep(until=200.0, seconds=2.0)
MODEL = ModelCall("generate_text", "hello", prompt="hi")


def test_a_single_request_is_answered_by_its_one_result():
    assert verdict(TOOL, {}) is None
    assert verdict(TOOL, {0: (True, 42)}) == Verdict(True, 42)
    error = ValueError("no")
    assert verdict(TOOL, {0: (False, error)}) == Verdict(False, error)


def test_a_gather_waits_for_every_member_and_keeps_member_order():
    payload = Gather((TOOL, MODEL, TOOL))
    assert verdict(payload, {2: (True, "c"), 0: (True, "a")}) is None
    assert verdict(payload, {2: (True, "c"), 0: (True, "a"), 1: (True, "b")}) == Verdict(
        True, ["a", "b", "c"]
    )


def test_a_gather_throws_the_first_failed_member_at_once():
    first, later = ValueError("first"), KeyError("later")
    payload = Gather((TOOL, TOOL, TOOL))
    assert verdict(payload, {2: (False, later), 1: (False, first)}) == Verdict(False, first)


def test_a_settled_gather_reports_each_member_once_all_are_in():
    error = ValueError("no")
    payload = Gather((TOOL, TOOL), settled=True)
    assert verdict(payload, {1: (False, error)}) is None
    assert verdict(payload, {1: (False, error), 0: (True, 1)}) == Verdict(
        True, [Fulfilled(1), Rejected(error)]
    )


def test_a_spent_model_call_budget_ends_the_run_even_in_a_settled_gather():
    spent = ModelCallBudgetExceeded("r", 3, "hello")
    payload = Gather((MODEL, TOOL), settled=True)
    assert verdict(payload, {0: (False, spent)}) == Verdict(False, spent)


def test_a_parked_run_waits_on_its_slowest_kind_of_thing():
    assert parked_on(Gather((SLEEP_SOON, ASK, CHILD)), {}) == ("child", None)
    assert parked_on(Gather((SLEEP_SOON, ASK, CHILD)), {2: (True, 1)}) == ("reply", None)
    assert parked_on(Gather((SLEEP_LATE, SLEEP_SOON)), {}) == ("timer", 100.0)
    assert parked_on(Gather((SLEEP_LATE, SLEEP_SOON)), {1: (True, None)}) == ("timer", 200.0)


def test_only_requests_answered_from_outside_need_a_wakeup():
    assert not waits_outside(Gather((TOOL, MODEL)))
    assert waits_outside(Gather((TOOL, ASK)))
    assert waits_outside(SLEEP_SOON)
    assert members(TOOL) == (TOOL,)


@pytest.mark.parametrize(
    ("pending", "oks", "answered"),
    [
        ({"kind": "ask"}, [], True),  # not a gather: whatever was journaled answers it
        ({"kind": "gather", "requests": [{}, {}], "settled": False}, [True], False),
        ({"kind": "gather", "requests": [{}, {}], "settled": False}, [False], True),  # fails fast
        ({"kind": "gather", "requests": [{}, {}], "settled": True}, [False], False),  # waits for all
        ({"kind": "gather", "requests": [{}, {}], "settled": True}, [False, True], True),
    ],
)
def test_a_parked_run_goes_on_when_its_stored_request_is_answered(pending, oks, answered):
    assert answered_in_store(pending, oks) is answered


def test_keys_and_child_ids_are_stable_and_name_the_member_only_in_a_gather():
    assert idempotency_key("r1", 3, 0, False) == "r1:3"
    assert idempotency_key("r1", 3, 2, True) == "r1:3.2"
    assert child_run_id("r1", 3, 0, False) == "r1.3"
    assert child_run_id("r1", 3, 1, True) == "r1.3.1"


def test_summaries_are_json_and_say_what_is_pending():
    assert summarize(TOOL) == {"kind": "tool", "name": "search", "kwargs": {"q": "x"}}
    assert summarize(Gather((ASK, SLEEP_SOON), settled=True)) == {
        "kind": "gather",
        "settled": True,
        "requests": [
            {"kind": "ask", "prompt": "ok?"},
            {"kind": "sleep", "seconds": 1.0, "until": 100.0},
        ],
    }
    long = summarize(ModelCall("generate_text", "s", prompt="x" * 500))
    assert long["kind"] == "llm" and len(long["prompt"]) == 200 and long["prompt"].endswith("…")
    assert describe_pending(summarize(TOOL)) == "pending tool search"
    assert describe_pending(None) == "no pending request"
