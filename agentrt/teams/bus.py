"""The artifact bus: a file-canonical publish/consume layer inside a run directory.

``bus/log.jsonl`` gets one ``guild.bus_event.v1`` line per publish with a monotonic ``seq``; the
publish path holds an exclusive ``fcntl`` lock on ``bus/.lock`` while it reads the last seq and
appends, so several processes sharing the directory never reuse one, and a lock it cannot take
in time fails closed (:class:`BusLockTimeout`, nothing written).  Content is stored once per
SHA-256 under ``bus/cas/<aa>/<sha256>`` with a ``.meta.yaml`` header.  Subscribers are
``bus/subscribers/<id>.yaml``; ``hook`` subscribers get one ``bus/fanout.jsonl`` delivery record per
matching event, ``poll`` subscribers tail the log themselves, and ``webhook-url`` subscribers are a
recorded remote seam that is never called.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any  # Any: JSON documents

import attrs

from agentrt.teams import _yaml
from agentrt.teams.contracts import TIERS
from agentrt.teams.errors import BusLockTimeout, ContractError
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

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": "guild.bus_event.v1", **attrs.asdict(self)}


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
    ) -> None:
        self.run_dir = Path(run_dir)
        self.root = self.run_dir / "bus"
        self.log_path = self.root / "log.jsonl"
        self.lock_path = self.root / ".lock"
        self.fanout_path = self.root / "fanout.jsonl"
        self.tiers = dict(tiers) if tiers is not None else routing_tiers(self.run_dir)
        self.lock_timeout = lock_timeout
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
    ) -> int | None:
        """Store ``data`` and append one event; the new ``seq``, or ``None`` for an invalid topic."""
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
        with self._locked():
            seq = self._last_seq() + 1
            record = BusEvent(seq, topic, event, digest, len(data), publisher, publisher_tier, time.time())
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record.to_dict(), sort_keys=True) + "\n")
                f.flush()
                os.fsync(f.fileno())
            self._fan_out(record)
        return seq

    def _last_seq(self) -> int:
        if not self.log_path.exists():
            return 0
        with open(self.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4096))
            lines = [line for line in f.read().splitlines() if line.strip()]
        if not lines:
            return 0
        return int(json.loads(lines[-1])["seq"])

    def events(self, after: int = 0) -> list[BusEvent]:
        if not self.log_path.exists():
            return []
        out = []
        with open(self.log_path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    d.pop("schema_version", None)
                    if d["seq"] > after:
                        out.append(BusEvent(**d))
        return out

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
        path.write_text(_yaml.dump(doc), encoding="utf-8")
        return path

    def subscribers(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted((self.root / "subscribers").glob("*.yaml")):
            doc = _yaml.load(path.read_text(encoding="utf-8"), str(path))
            if isinstance(doc, dict):
                out.append(doc)
        return out

    def _fan_out(self, record: BusEvent) -> None:
        """One delivery record per matching ``hook`` subscriber; ``webhook-url`` is never called."""
        lines = []
        for sub in self.subscribers():
            if sub.get("callback") != "hook":
                continue
            if any(matches(p, record.topic) for p in sub.get("topics", [])):
                lines.append(
                    json.dumps(
                        {
                            "subscriber": sub["id"],
                            "seq": record.seq,
                            "topic": record.topic,
                            "event": record.event,
                        }
                    )
                )
        if lines:
            with open(self.fanout_path, "a", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")

    def deliveries(self) -> list[dict[str, Any]]:
        if not self.fanout_path.exists():
            return []
        return [
            json.loads(line)
            for line in self.fanout_path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
