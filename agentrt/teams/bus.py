"""The artifact bus: a file-canonical publish/consume layer inside a run directory.

``bus/log.jsonl`` gets one ``guild.bus_event.v1`` line per publish with a monotonic ``seq``; the
publish path holds an exclusive ``fcntl`` lock on ``bus/.lock`` while it reads the last seq and
appends, so several processes sharing the directory never reuse one, and a lock it cannot take
in time fails closed (:class:`BusLockTimeout`, nothing written).  Content is stored once per
SHA-256 under ``bus/cas/<aa>/<sha256>`` with a ``.meta.yaml`` header.  Subscribers are
``bus/subscribers/<id>.yaml``; ``hook`` subscribers get one ``bus/fanout.jsonl`` delivery record per
matching event, ``poll`` subscribers tail the log themselves, and ``webhook-url`` subscribers are a
recorded remote seam that is never called.

A publish survives a crash at any point.  Under the lock it first repairs a torn last line of
the log or the fan-out record (:mod:`agentrt.teams.jsonl`), then completes the fan-out of the
last logged event (a publisher killed between its log line and its deliveries left that event
without them), and a publish with an idempotency ``key`` already in the log appends nothing and
returns the seq it got the first time: a lane's receipt re-published on resume is one event and
one delivery per hook subscriber, not two.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any  # Any: JSON documents

import attrs

from agentrt.exceptions import BusLockTimeout, ContractError
from agentrt.teams import _yaml, jsonl
from agentrt.teams.contracts import TIERS
from agentrt.teams.names import check_name, confined

__all__ = ["CALLBACKS", "EVENTS", "TOPIC_TYPES", "Bus", "BusEvent", "matches"]

TOPIC_TYPES = ("handoff", "status", "context", "review", "approval", "heartbeat")
EVENTS = ("artifact.published", "artifact.streaming", "artifact.closed", "artifact.retracted")
CALLBACKS = ("hook", "poll", "webhook-url")
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@attrs.frozen
class BusEvent:
    """One line of ``bus/log.jsonl``."""

    seq: int
    topic: str
    event: str
    sha256: str
    size: int
    publisher: str | None
    publisher_tier: str | None
    ts: float
    key: str | None = None  # the idempotency key of a publish that must happen once

    def to_dict(self) -> dict[str, Any]:
        d = {"schema_version": "guild.bus_event.v1", **attrs.asdict(self)}
        if self.key is None:
            del d["key"]  # the reference's shape, for an ordinary publish
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BusEvent:
        return cls(**{f.name: d[f.name] for f in attrs.fields(cls) if f.name in d})


_EVENT_KEYS = frozenset(f.name for f in attrs.fields(BusEvent) if f.name != "key")


def _whole_event(record: dict[str, Any]) -> bool:
    return record.get("schema_version") == "guild.bus_event.v1" and record.keys() >= _EVENT_KEYS


def routing_tiers(run_dir: str | os.PathLike[str]) -> dict[str, str]:
    """``lane-<task_id>`` -> tier, from the lead's routing record (empty when there is none)."""
    path = Path(run_dir) / "routing.jsonl"
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {f"lane-{r['task_id']}": str(r["tier"]) for r in rows}


def valid_topic(topic: str) -> bool:
    """``<type>/<scope>/<resource>`` with a known type."""
    parts = topic.split("/") if isinstance(topic, str) else []
    return len(parts) == 3 and parts[0] in TOPIC_TYPES and all(_SEGMENT.match(p) for p in parts)


def matches(pattern: str, topic: str) -> bool:
    """Topic glob: ``*`` matches one segment, a trailing ``**`` matches the rest (one or more)."""
    pat, top = pattern.split("/"), topic.split("/")
    for i, part in enumerate(pat):
        if part == "**" and i == len(pat) - 1:
            return len(top) > i
        if i >= len(top):
            return False
        if part != "*" and part != top[i]:
            return False
    return len(pat) == len(top)


class Bus:
    """The bus of one run directory (``.agentrt/runs/<run>/``); safe across processes.

    ``tiers`` maps a publisher id to the tier durable state says it holds; by default it is read
    from the run's routing record, ``<run_dir>/routing.jsonl`` (publisher ``lane-<task_id>``), so a
    publisher asserting another tier is refused.
    """

    def __init__(
        self,
        run_dir: str | os.PathLike[str],
        *,
        tiers: Mapping[str, str] | None = None,
        lock_timeout: float = 10.0,
        step: Callable[[str], None] | None = None,
    ) -> None:
        """``step`` is called with ``"bus.stored"``, ``"bus.logged"`` and ``"bus.fanned-out"`` as a
        publish passes each point: a seam for crash tests (they kill the process there)."""
        self.run_dir = Path(run_dir)
        self.root = self.run_dir / "bus"
        self.log_path = self.root / "log.jsonl"
        self.lock_path = self.root / ".lock"
        self.fanout_path = self.root / "fanout.jsonl"
        self.tiers = dict(tiers) if tiers is not None else routing_tiers(self.run_dir)
        self.lock_timeout = lock_timeout
        self._step = step or (lambda _name: None)
        (self.root / "cas").mkdir(parents=True, exist_ok=True)
        (self.root / "subscribers").mkdir(parents=True, exist_ok=True)

    matches = staticmethod(matches)

    # -- locking

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + self.lock_timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise BusLockTimeout(str(self.lock_path), self.lock_timeout) from None
                    time.sleep(0.005)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # -- content

    def cas_path(self, sha256: str) -> Path:
        return self.root / "cas" / sha256[:2] / sha256

    def read(self, sha256: str) -> bytes:
        return self.cas_path(sha256).read_bytes()

    def _store(self, data: bytes, topic: str) -> str:
        import hashlib

        digest = hashlib.sha256(data).hexdigest()
        path = self.cas_path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{digest}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
            meta = {
                "schema_version": "guild.cas_meta.v1",
                "sha256": digest,
                "size": len(data),
                "topic": topic,
            }
            meta_tmp = path.with_name(f".{digest}.meta.{os.getpid()}.tmp")
            meta_tmp.write_text(_yaml.dump(meta), encoding="utf-8")
            os.replace(meta_tmp, path.with_name(f"{digest}.meta.yaml"))
        return digest

    # -- publish / consume

    def publish(
        self,
        topic: str,
        data: bytes,
        *,
        event: str = "artifact.published",
        publisher: str | None = None,
        publisher_tier: str | None = None,
        key: str | None = None,
    ) -> int | None:
        """Store ``data`` and append one event; the new ``seq``, or ``None`` for an invalid topic.

        With ``key``, the publish happens once: if an event with that key is in the log already,
        nothing is appended and its seq is returned (its hook deliveries completed if a crash cut
        them short).
        """
        if not valid_topic(topic):
            return None
        if event not in EVENTS:
            raise ContractError(
                "guild.bus_event.v1", "event", f"must be one of {', '.join(EVENTS)}; got {event!r}"
            )
        if publisher_tier is not None:
            held = self.tiers.get(publisher or "")
            if publisher_tier not in TIERS or held != publisher_tier:
                raise ContractError(
                    "artifact bus",
                    "publisher_tier",
                    f"publisher {publisher!r} asserts tier {publisher_tier!r} but holds {held!r} "
                    "in the run's "
                    "routing record; publish with the tier the lane was dispatched at",
                )
        digest = self._store(bytes(data), topic)
        self._step("bus.stored")
        with self._locked():
            jsonl.repair_tail(self.log_path, _whole_event)
            jsonl.repair_tail(self.fanout_path)
            logged = self._logged()
            if logged:
                self._fan_out(logged[-1])  # a publisher killed before its deliveries
            if key is not None:
                for earlier in logged:
                    if earlier.key == key:
                        self._fan_out(earlier)
                        return earlier.seq
            seq = (logged[-1].seq if logged else 0) + 1
            record = BusEvent(
                seq, topic, event, digest, len(data), publisher, publisher_tier, time.time(), key
            )
            jsonl.append_lines(self.log_path, [record.to_dict()])
            self._step("bus.logged")
            self._fan_out(record)
            self._step("bus.fanned-out")
        return seq

    def _logged(self) -> list[BusEvent]:
        return [BusEvent.from_dict(d) for d in jsonl.read_records(self.log_path) if _whole_event(d)]

    def events(self, after: int = 0) -> list[BusEvent]:
        """The events after ``seq`` ``after``; a torn or foreign line is skipped with a warning."""
        return [e for e in self._logged() if e.seq > after]

    # -- subscribers

    def subscribe(
        self, sub_id: str, topics: list[str], callback: str = "poll", *, url: str | None = None
    ) -> Path:
        if not _SUB_ID.match(sub_id or ""):
            raise ContractError("guild.bus_subscriber.v1", "id", f"must be a plain name, got {sub_id!r}")
        if callback not in CALLBACKS:
            raise ContractError(
                "guild.bus_subscriber.v1",
                "callback",
                f"must be one of {', '.join(CALLBACKS)}; got {callback!r}",
            )
        if callback == "webhook-url" and not url:
            raise ContractError("guild.bus_subscriber.v1", "url", "a webhook-url subscriber needs url=")
        if not topics or not all(isinstance(t, str) and t for t in topics):
            raise ContractError(
                "guild.bus_subscriber.v1", "topics", "must be a non-empty list of topic globs"
            )
        doc: dict[str, Any] = {
            "schema_version": "guild.bus_subscriber.v1",
            "id": sub_id,
            "topics": list(topics),
            "callback": callback,
        }
        if url:
            doc["url"] = url
        path = confined(self.root / "subscribers", f"{check_name(sub_id, 'bus subscriber', 'id')}.yaml")
        with self._locked():  # a hook subscriber gets the events published after it subscribed
            jsonl.repair_tail(self.log_path, _whole_event)
            logged = self._logged()
            doc["after_seq"] = logged[-1].seq if logged else 0
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(_yaml.dump(doc), encoding="utf-8")
            os.replace(tmp, path)
        return path

    def subscribers(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted((self.root / "subscribers").glob("*.yaml")):
            doc = _yaml.load(path.read_text(encoding="utf-8"), str(path))
            if isinstance(doc, dict):
                out.append(doc)
        return out

    def _fan_out(self, record: BusEvent) -> None:
        """One delivery record per matching ``hook`` subscriber that has none for this seq yet;
        ``webhook-url`` is never called."""
        done = {(d.get("subscriber"), d.get("seq")) for d in jsonl.read_records(self.fanout_path)}
        lines = []
        for sub in self.subscribers():
            if sub.get("callback") != "hook" or (sub.get("id"), record.seq) in done:
                continue
            if record.seq <= int(sub.get("after_seq") or 0):
                continue
            if any(matches(p, record.topic) for p in sub.get("topics", [])):
                lines.append(
                    {"subscriber": sub["id"], "seq": record.seq, "topic": record.topic, "event": record.event}
                )
        jsonl.append_lines(self.fanout_path, lines)

    def deliveries(self) -> list[dict[str, Any]]:
        """The delivery records, in order; a torn line is skipped with a warning."""
        return jsonl.read_records(self.fanout_path)
