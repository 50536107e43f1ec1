"""The worker registry's record: what a live worker advertises in the store about itself.

A mixed fleet (a rolling deploy) needs to be seen from outside: which workers are up, which
code each one carries, and which runs none of them can resume.  Each worker writes one row
about itself (:meth:`~agentrt.stores.base.Store.advertise_worker`, an upsert keyed by its lease
owner id) when it starts, when what it knows changes, and every ``lease_seconds`` as a
heartbeat; it deletes the row when it stops cleanly (``forget_worker``).  A killed worker just
stops writing: its row is *live* while ``last_seen`` is within :data:`LIVE_LEASES` leases (and,
on its own machine, while its pid runs), then it is shown as gone, and rows older than
:data:`PRUNE_AFTER_SECONDS` are deleted, in small batches, by the advertisements of others.

Code requirements (a run row's ``code_required``, see ``agentrt._codec._requirement``) can be
long -- one line per suspended function -- so a row names each by a short key
(:func:`requirement_key`) with a one-line summary, and keeps a bounded number of them: the row
stays small however many requirements a long-lived worker has judged.

This module imports nothing from the rest of :mod:`agentrt.stores`: ``base`` imports it for the
protocol, and the stores encode the record with :func:`to_json` / :func:`from_json`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any  # Any: JSON documents

import attrs

__all__ = [
    "LIVE_LEASES",
    "MAX_AGENTS",
    "MAX_VERDICTS",
    "PRUNE_AFTER_SECONDS",
    "PRUNE_BATCH",
    "PRUNE_EVERY_SECONDS",
    "AgentCode",
    "CodeVerdict",
    "WorkerInfo",
    "bounded",
    "from_json",
    "requirement_key",
    "requirement_summary",
    "to_json",
]

#: A worker is live while it was seen within this many of its leases (it writes once per lease).
LIVE_LEASES = 3
#: Rows of workers not seen for this long are deleted (by another worker's advertisement).
PRUNE_AFTER_SECONDS = 6 * 3600.0
#: At most this many rows are deleted by one advertisement (a store's write stays short).
PRUNE_BATCH = 100
#: How often one store handle prunes at most.
PRUNE_EVERY_SECONDS = 600.0
#: How many carried and how many lacking requirements a row keeps (the newest), and agents.
MAX_VERDICTS = 32
MAX_AGENTS = 64
_MAX_SUMMARY = 160
_MAX_REASON = 300
_KEY_CHARS = 16


def requirement_key(code_required: str) -> str:
    """The short name of a code requirement text in the registry (a hash: rows stay small)."""
    return hashlib.sha256(code_required.encode("utf-8", "surrogatepass")).hexdigest()[:_KEY_CHARS]


def requirement_summary(code_required: str) -> str:
    """A code requirement on one line: ``python 3.12, blob 2: app:run 376102e1 (+2 more)``.

    Read from the canonical text as plain words (a store does not decode blobs); a text that is
    not one is shown clipped as it is."""
    head, *codes = code_required.split("\n")
    words = head.split(" ")
    if len(words) != 4 or words[0] != "agentrt-blob":
        return _clip(" ".join(code_required.split()), _MAX_SUMMARY)
    shown = []
    for line in codes[:2]:
        name, _, digest = line.rpartition(" ")
        shown.append(f"{name} {digest[:8]}")
    more = f" (+{len(codes) - 2} more)" if len(codes) > 2 else ""
    return _clip(f"python {words[3]}, blob {words[1]}: " + ", ".join(shown) + more, _MAX_SUMMARY)


@attrs.frozen
class AgentCode:
    """An agent a worker has loaded: its spec and its ``run`` function's ``module:qualname digest``."""

    spec: str
    code: str


@attrs.frozen
class CodeVerdict:
    """A code requirement a worker has judged: its key, a one-line summary, and why it cannot meet
    it ("" for one it carries)."""

    key: str
    summary: str
    reason: str = ""


@attrs.frozen
class WorkerInfo:
    """One worker as the registry keeps it (``Store.advertise_worker`` / ``list_workers``)."""

    #: Its lease owner id (``host/pid/nonce``): what the runs it drives name in ``lease_owner``.
    owner: str
    host: str
    pid: int
    started_at: float
    #: When it last advertised (``time.time()`` seconds, its own clock, as leases are).
    last_seen: float
    #: ``agentrt X.Y.Z`` and ``3.12``: what it runs.
    version: str = ""
    python: str = ""
    #: The blob formats it reads, and the one it writes.
    reads_formats: tuple[int, ...] = ()
    writes_format: int = 0
    #: Its lease (it advertises at least once per lease; live for ``LIVE_LEASES`` of them).
    lease_seconds: float = 10.0
    concurrency: int = 0
    agents: tuple[AgentCode, ...] = ()
    #: The requirements it has judged it can meet, and those it cannot (newest last, bounded).
    carried: tuple[CodeVerdict, ...] = ()
    lacking: tuple[CodeVerdict, ...] = ()
    #: ``(column or field, why)`` when the stored row was damaged (that field holds its default).
    damaged: tuple[str, str] | None = None

    def live(self, now: float | None = None) -> bool:
        """Whether the worker advertised recently enough to be taken as running (a dead pid on
        this machine is not checked here: see :func:`agentrt.stores.fleet.is_live`)."""
        now = time.time() if now is None else now
        return now - self.last_seen <= LIVE_LEASES * max(self.lease_seconds, 0.05)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def bounded(info: WorkerInfo) -> WorkerInfo:
    """``info`` within the registry's bounds: the newest verdicts and agents, short texts."""

    def verdicts(items: tuple[CodeVerdict, ...]) -> tuple[CodeVerdict, ...]:
        return tuple(
            CodeVerdict(v.key[:_KEY_CHARS], _clip(v.summary, _MAX_SUMMARY), _clip(v.reason, _MAX_REASON))
            for v in items[-MAX_VERDICTS:]
        )

    return attrs.evolve(
        info,
        agents=tuple(AgentCode(_clip(a.spec, 200), _clip(a.code, 300)) for a in info.agents[-MAX_AGENTS:]),
        carried=verdicts(info.carried),
        lacking=verdicts(info.lacking),
    )


def to_json(info: WorkerInfo) -> str:
    """The row's ``info`` column: everything but the columns a query needs (owner, host, pid,
    started_at, last_seen)."""
    return json.dumps(
        {
            "version": info.version,
            "python": info.python,
            "reads_formats": list(info.reads_formats),
            "writes_format": info.writes_format,
            "lease_seconds": info.lease_seconds,
            "concurrency": info.concurrency,
            "agents": [[a.spec, a.code] for a in info.agents],
            "carried": [[v.key, v.summary, v.reason] for v in info.carried],
            "lacking": [[v.key, v.summary, v.reason] for v in info.lacking],
        },
        separators=(",", ":"),
    )


def from_json(owner: str, host: str, pid: int, started_at: float, last_seen: float, text: str) -> WorkerInfo:
    """A row back as a record; a field a newer agentrt added is ignored, one it lacks -- or one that
    is not what this agentrt writes (a damaged or forged row) -- is defaulted, so one bad row never
    breaks ``agentrt workers``."""
    damage: list[tuple[str, str]] = []
    try:
        data: Any = json.loads(text) if text else {}
    except (ValueError, TypeError, RecursionError) as exc:
        damage.append(("data", f"invalid JSON: {exc}"))
        data = {}
    if not isinstance(data, dict):
        damage.append(("data", f"JSON {type(data).__name__}, not an object"))
        data = {}

    def converted(name: str, convert: Callable[[Any], Any], value: Any, default: Any) -> Any:
        result = _converted(convert, value, _DAMAGED)
        if result is _DAMAGED:
            damage.append((name, f"cannot be read: {str(value)[:60]!r}"))
            return default
        return result

    def field(name: str, convert: Callable[[Any], Any], default: Any) -> Any:
        return converted(name, convert, data.get(name, default), default)

    info = WorkerInfo(
        owner=str(owner),
        host=str(host),
        pid=converted("pid", int, pid, 0),
        started_at=converted("started_at", float, started_at, 0.0),
        last_seen=converted("last_seen", float, last_seen, 0.0),
        version=field("version", str, ""),
        python=field("python", str, ""),
        reads_formats=field("reads_formats", lambda v: tuple(int(x) for x in v), ()),
        writes_format=field("writes_format", int, 0),
        lease_seconds=field("lease_seconds", float, 10.0),
        concurrency=field("concurrency", int, 0),
        agents=field("agents", lambda v: tuple(AgentCode(str(s), str(c)) for s, c in v), ()),
        carried=field("carried", _verdicts, ()),
        lacking=field("lacking", _verdicts, ()),
    )
    return attrs.evolve(info, damaged=damage[0]) if damage else info


_DAMAGED = object()  # what _converted answers for a value that cannot be converted


def _verdicts(items: Any) -> tuple[CodeVerdict, ...]:
    return tuple(CodeVerdict(*map(str, v)) for v in items)


def _converted(convert: Callable[[Any], Any], value: Any, default: Any) -> Any:
    try:
        return convert(value)
    except (TypeError, ValueError, OverflowError):
        return default
