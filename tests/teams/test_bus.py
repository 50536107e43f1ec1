"""The artifact bus: seq under a lock across processes, CAS, topic globs, tiers, subscribers."""

from __future__ import annotations

import fcntl
import hashlib
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from agentrt.teams import Bus, BusLockTimeout, ContractError, matches


@pytest.mark.parametrize(
    ("pattern", "topic", "expected"),
    [
        ("handoff/run1/L1", "handoff/run1/L1", True),
        ("handoff/*/L1", "handoff/run1/L1", True),
        ("handoff/*", "handoff/run1/L1", False),  # * is one segment
        ("*/run1/*", "status/run1/L2", True),
        ("handoff/**", "handoff/run1/L1", True),  # trailing ** the rest
        ("**", "review/a/b", True),
        ("handoff/run1/**", "handoff/run1/L1", True),
        ("handoff/run2/**", "handoff/run1/L1", False),
        ("status/**", "handoff/run1/L1", False),
        ("handoff/run1/L1/**", "handoff/run1/L1", False),
    ],
)
def test_topic_globs(pattern: str, topic: str, expected: bool) -> None:
    assert matches(pattern, topic) is expected
    assert Bus.matches(pattern, topic) is expected


def test_publish_is_file_canonical_and_content_addressed(tmp_path: Path) -> None:
    bus = Bus(tmp_path)
    data = b"receipt body"
    assert bus.publish("handoff/run1/L1", data) == 1
    assert bus.publish("handoff/run1/L2", data, event="artifact.closed") == 2
    digest = hashlib.sha256(data).hexdigest()
    assert (tmp_path / "bus" / "log.jsonl").is_file()
    assert bus.cas_path(digest) == tmp_path / "bus" / "cas" / digest[:2] / digest
    assert bus.read(digest) == data
    assert (
        (tmp_path / "bus" / "cas" / digest[:2] / f"{digest}.meta.yaml")
        .read_text()
        .startswith("schema_version: guild.cas_meta.v1")
    )
    events = bus.events()
    assert [(e.seq, e.topic, e.event, e.sha256) for e in events] == [
        (1, "handoff/run1/L1", "artifact.published", digest),
        (2, "handoff/run1/L2", "artifact.closed", digest),
    ]
    assert [e.seq for e in bus.events(after=1)] == [2]
    # a second Bus on the same directory continues the seq
    assert Bus(tmp_path).publish("status/run1/L1", b"x") == 3


@pytest.mark.parametrize("topic", ["handoff/run1", "gossip/run1/L1", "handoff/run 1/L1", "a/b/c/d", ""])
def test_invalid_topic_returns_none(tmp_path: Path, topic: str) -> None:
    bus = Bus(tmp_path)
    assert bus.publish(topic, b"x") is None
    assert bus.events() == []


def test_unknown_event_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match=r"artifact\.published"):
        Bus(tmp_path).publish("handoff/r/L1", b"x", event="artifact.deleted")


def test_publisher_asserting_a_tier_it_does_not_hold_is_refused(tmp_path: Path) -> None:
    bus = Bus(tmp_path, tiers={"lane-L1": "cheap"})
    assert bus.publish("handoff/r/L1", b"x", publisher="lane-L1", publisher_tier="cheap") == 1
    with pytest.raises(ContractError, match="asserts tier 'powerful' but holds 'cheap'"):
        bus.publish("handoff/r/L1", b"x", publisher="lane-L1", publisher_tier="powerful")
    with pytest.raises(ContractError, match="holds None"):
        bus.publish("handoff/r/L9", b"x", publisher="lane-L9", publisher_tier="mid")
    assert len(bus.events()) == 1


def test_tiers_come_from_the_runs_routing_record_by_default(tmp_path: Path) -> None:
    (tmp_path / "routing.jsonl").write_text(
        '{"task_id": "L1", "tier": "mid"}\n{"task_id": "L2", "tier": "cheap"}\n'
    )
    bus = Bus(tmp_path)
    assert bus.publish("handoff/r/L1", b"x", publisher="lane-L1", publisher_tier="mid") == 1
    with pytest.raises(ContractError, match="holds 'cheap'"):
        bus.publish("handoff/r/L2", b"x", publisher="lane-L2", publisher_tier="powerful")


def test_lock_timeout_fails_closed(tmp_path: Path) -> None:
    bus = Bus(tmp_path, lock_timeout=0.05)
    fd = os.open(bus.lock_path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(BusLockTimeout, match="fails closed"):
            bus.publish("handoff/r/L1", b"x")
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert bus.events() == []
    assert bus.publish("handoff/r/L1", b"x") == 1


def test_subscribers_hook_poll_webhook(tmp_path: Path) -> None:
    bus = Bus(tmp_path)
    bus.subscribe("lead", ["handoff/**"], "hook")
    bus.subscribe("reviewer", ["*/run1/L2"], "hook")
    bus.subscribe("dash", ["**"], "poll")
    bus.subscribe("remote", ["**"], "webhook-url", url="http://127.0.0.1:9/never")
    assert (tmp_path / "bus" / "subscribers" / "lead.yaml").is_file()
    bus.publish("handoff/run1/L1", b"a")
    bus.publish("handoff/run1/L2", b"b")
    bus.publish("status/run1/L3", b"c")
    assert [(d["subscriber"], d["seq"]) for d in bus.deliveries()] == [
        ("lead", 1),
        ("lead", 2),
        ("reviewer", 2),
    ]
    remote = next(s for s in bus.subscribers() if s["id"] == "remote")
    assert remote["url"] == "http://127.0.0.1:9/never"  # recorded, never called (no delivery either)
    with pytest.raises(ContractError, match="callback"):
        bus.subscribe("x", ["**"], "email")
    with pytest.raises(ContractError, match="url"):
        bus.subscribe("x", ["**"], "webhook-url")


def _publisher(run_dir: str, who: int, n: int) -> None:
    bus = Bus(run_dir, lock_timeout=60)
    for i in range(n):
        bus.publish(f"status/run1/p{who}", f"{who}:{i}".encode())


def test_concurrent_processes_get_unique_contiguous_seqs(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_publisher, args=(str(tmp_path), who, 40)) for who in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    for p in procs:
        p.close()
    events = Bus(tmp_path).events()
    assert [e.seq for e in events] == list(range(1, 161))
    per = {
        who: [Bus(tmp_path).read(e.sha256).decode() for e in events if e.topic.endswith(f"p{who}")]
        for who in range(4)
    }
    assert all(per[who] == [f"{who}:{i}" for i in range(40)] for who in range(4))


# ---------------------------------------------------------------------------- exactly once, torn writes


def test_a_keyed_publish_happens_once(tmp_path: Path) -> None:
    bus = Bus(tmp_path)
    bus.subscribe("lead", ["handoff/**"], "hook")
    assert bus.publish("handoff/run1/L1", b"receipt", key="receipt/L1/1") == 1
    assert bus.publish("status/run1/L1", b"x") == 2
    # the same key again (a tool call replayed after a crash): no second event, no second delivery
    assert Bus(tmp_path).publish("handoff/run1/L1", b"receipt", key="receipt/L1/1") == 1
    assert [(e.seq, e.key) for e in bus.events()] == [(1, "receipt/L1/1"), (2, None)]
    assert [(d["subscriber"], d["seq"]) for d in bus.deliveries()] == [("lead", 1)]
    # another attempt is another key
    assert bus.publish("handoff/run1/L1", b"receipt 2", key="receipt/L1/2") == 3
    # an unkeyed event keeps the reference's shape (no key field on the wire)
    lines = (tmp_path / "bus" / "log.jsonl").read_text().splitlines()
    assert '"key"' not in lines[1] and '"key": "receipt/L1/1"' in lines[0]


def test_deliveries_a_kill_cut_short_are_completed_by_the_next_publish(tmp_path: Path) -> None:
    def die_after_logging(name: str) -> None:
        if name == "bus.logged":
            raise KeyboardInterrupt  # stands for the kill: the event is logged, its deliveries not

    Bus(tmp_path).subscribe("lead", ["handoff/**"], "hook")
    with pytest.raises(KeyboardInterrupt):
        Bus(tmp_path, step=die_after_logging).publish("handoff/run1/L1", b"r")
    bus = Bus(tmp_path)
    assert bus.deliveries() == []
    assert bus.publish("handoff/run1/L2", b"s") == 2
    assert [(d["subscriber"], d["seq"]) for d in bus.deliveries()] == [("lead", 1), ("lead", 2)]


def test_a_hook_subscriber_gets_the_events_after_it_subscribed(tmp_path: Path) -> None:
    bus = Bus(tmp_path)
    bus.publish("handoff/run1/L1", b"before")
    bus.subscribe("late", ["handoff/**"], "hook")
    bus.publish("handoff/run1/L2", b"after")
    bus.publish("handoff/run1/L3", b"after")
    assert [d["seq"] for d in bus.deliveries()] == [2, 3]


def _published(tmp_path: Path, n: int) -> tuple[Path, bytes]:
    bus = Bus(tmp_path)
    bus.subscribe("lead", ["handoff/**"], "hook")
    for i in range(1, n + 1):
        bus.publish(f"handoff/run1/L{i}", f"receipt {i}".encode())
    log = tmp_path / "bus" / "log.jsonl"
    return log, log.read_bytes()


@pytest.mark.slow
def test_a_log_torn_at_every_byte_of_its_last_record_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _, two = _published(tmp_path / "two", 2)
    shutil.copytree(tmp_path / "two", tmp_path / "three")
    Bus(tmp_path / "three").publish("handoff/run1/L3", b"receipt 3")
    last = (tmp_path / "three" / "bus" / "log.jsonl").read_bytes()[len(two) :]
    assert last.endswith(b"\n") and last.count(b"\n") == 1
    for cut in range(len(last) + 1):  # 0: the record never started; len: it is whole
        run = tmp_path / f"cut{cut}"
        shutil.copytree(tmp_path / "two", run)  # the writer died writing seq 3's line: no deliveries yet
        log = run / "bus" / "log.jsonl"
        log.write_bytes(two + last[:cut])
        kept_last = cut >= len(last) - 1  # whole, or missing only its newline: a complete record
        # a reader skips a torn line with a warning, and loses no whole record
        caplog.clear()
        seqs = [e.seq for e in Bus(run).events()]
        assert seqs == ([1, 2, 3] if kept_last else [1, 2])
        torn = 0 < cut < len(last) - 1
        assert any("not a whole JSON record" in r.getMessage() for r in caplog.records) is torn, cut
        # the next publish repairs the log under the lock, then appends
        bus = Bus(run)
        new_seq = bus.publish("handoff/run1/L9", b"after the tear")
        assert new_seq == (4 if kept_last else 3), cut
        events = bus.events()
        assert [e.seq for e in events] == list(range(1, new_seq + 1))
        assert [e.topic for e in events][:2] == ["handoff/run1/L1", "handoff/run1/L2"]
        assert log.read_bytes().endswith(b"\n")
        side = run / "bus" / "log.jsonl.torn"
        if torn:
            assert side.read_bytes() == last[:cut] + b"\n"  # the torn bytes, kept for a person
        else:
            assert not side.exists()
        # and the hook subscriber got one delivery per whole event
        assert sorted(d["seq"] for d in bus.deliveries()) == list(range(1, new_seq + 1))


def test_a_torn_fanout_line_is_repaired_too(tmp_path: Path) -> None:
    _, _ = _published(tmp_path, 2)
    fanout = tmp_path / "bus" / "fanout.jsonl"
    whole = fanout.read_bytes()
    fanout.write_bytes(whole[:-7])  # the second delivery torn
    bus = Bus(tmp_path)
    assert bus.publish("handoff/run1/L3", b"3") == 3
    assert [d["seq"] for d in bus.deliveries()] == [1, 2, 3]  # seq 2's delivery completed again
    assert (tmp_path / "bus" / "fanout.jsonl.torn").is_file()
