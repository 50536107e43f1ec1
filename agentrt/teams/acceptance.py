"""A lane's completion, exactly once: its receipt, its bus event, its hook deliveries.

A lane's final act is one tool call (``teams_write_receipt``).  The runtime journals a tool's
result when the call returns, so a process killed inside the call makes it again on resume: the
call runs at least once.  Its effects must happen once.  So the completion is keyed by lane and
attempt, and each effect is idempotent under that key:

1. the **acceptance record** ``.agentrt/runs/<run>/accepted/<specialist>-<task>.<attempt>.json``
   is the commit point.  If it exists the call is a replay: nothing is written again and the
   recorded answer is returned;
2. the receipt file is written whole (a temporary file, then a rename), the same bytes each time;
3. the receipt is published with the bus key ``receipt/<task>/<attempt>``: the bus appends no
   second event for a key it holds and completes the hook deliveries a kill cut short;
4. the acceptance record is written (a temporary file, fsync, rename) naming the receipt's
   SHA-256 and the bus seq.  The lead trusts a receipt only when it matches its acceptance record:
   as in the reference, a receipt on disk alone never completes a lane.

``step_hook`` is a seam for crash tests only: it is called with the name of each point the
completion passes (``receipt.written``, ``bus.stored``, ``bus.logged``, ``bus.fanned-out``,
``receipt.published``, ``receipt.accepted``, and ``lead.reading`` when the lead, holding the
lane's result, reads the receipt), and a test kills the process there.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any  # Any: JSON envelopes and records

from agentrt.exceptions import ContractError
from agentrt.teams.bus import Bus
from agentrt.teams.contracts import validate_handoff
from agentrt.teams.names import check_name, confined
from agentrt.teams.receipts import receipt_path, render_receipt, status_line

__all__ = ["ACCEPTANCE_SCHEMA", "accept_receipt", "acceptance_path", "at_step", "check_accepted", "step_hook"]

ACCEPTANCE_SCHEMA = "agentrt.handoff_acceptance.v1"

#: Called with the name of each point a lane's completion passes; for crash tests only.
step_hook: Callable[[str], None] | None = None


def at_step(name: str) -> None:
    """Pass the point ``name`` (calls :data:`step_hook`, if a crash test set one)."""
    if step_hook is not None:
        step_hook(name)


def acceptance_path(
    project: str | os.PathLike[str], run_id: str, specialist: str, task_id: str, attempt: int
) -> Path:
    """``.agentrt/runs/<run>/accepted/<specialist>-<task>.<attempt>.json`` under the project."""
    for key, name in (("run_id", run_id), ("specialist", specialist), ("task_id", task_id)):
        check_name(name, "handoff acceptance", key)
    if not isinstance(attempt, int) or attempt < 1:
        raise ContractError(
            "handoff acceptance", "attempt", f"must be a whole number from 1; got {attempt!r}"
        )
    return confined(project, ".agentrt", "runs", run_id, "accepted", f"{specialist}-{task_id}.{attempt}.json")


def _write_whole(path: Path, data: bytes, *, sync: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def accept_receipt(
    project: str | Path,
    run_id: str,
    specialist: str,
    envelope: Mapping[str, Any],
    sections: Mapping[str, Sequence[str]],
    attempt: int,
) -> dict[str, Any]:
    """Write, publish and accept one lane attempt's receipt, once however often it is called.

    Returns the acceptance record: ``receipt`` (path), ``receipt_sha256``, ``seq``, ``line``, ...
    """
    handoff = validate_handoff(dict(envelope))
    accepted = acceptance_path(project, run_id, specialist, handoff.task_id, attempt)
    if accepted.is_file():
        record: dict[str, Any] = json.loads(accepted.read_text(encoding="utf-8"))
        return record
    path = receipt_path(project, run_id, specialist, handoff.task_id)
    text = render_receipt(handoff, run_id=run_id, specialist=specialist, sections=sections)
    data = text.encode()
    _write_whole(path, data, sync=False)
    at_step("receipt.written")
    run_dir = confined(project, ".agentrt", "runs", run_id)
    topic = f"handoff/{run_id}/{handoff.task_id}"
    bus = Bus(run_dir, step=at_step)  # tiers from the run's routing record
    seq = bus.publish(
        topic,
        data,
        publisher=f"lane-{handoff.task_id}",
        publisher_tier=handoff.tier,
        key=f"receipt/{handoff.task_id}/{attempt}",
    )
    at_step("receipt.published")
    record = {
        "schema_version": ACCEPTANCE_SCHEMA,
        "run_id": run_id,
        "specialist": specialist,
        "task_id": handoff.task_id,
        "attempt": attempt,
        "receipt": str(path),
        "receipt_sha256": hashlib.sha256(data).hexdigest(),
        "topic": topic,
        "seq": seq,
        "line": status_line(handoff, path),
    }
    _write_whole(accepted, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode(), sync=True)
    at_step("receipt.accepted")
    return record


def check_accepted(receipt: str | os.PathLike[str], acceptance: str | os.PathLike[str]) -> str:
    """The receipt's text, if it is the one its acceptance record accepted; else a ContractError."""
    record = json.loads(Path(acceptance).read_text(encoding="utf-8"))
    data = Path(receipt).read_bytes()
    if record.get("schema_version") != ACCEPTANCE_SCHEMA or Path(record.get("receipt", "")) != Path(receipt):
        raise ContractError(
            "handoff acceptance", "receipt", f"{acceptance} does not accept {receipt}; re-run the lane"
        )
    if hashlib.sha256(data).hexdigest() != record.get("receipt_sha256"):
        raise ContractError(
            "handoff acceptance",
            "receipt_sha256",
            f"{receipt} changed after attempt {record.get('attempt')} accepted it "
            f"({acceptance}); the lead trusts only the accepted bytes: re-run the lane",
        )
    return data.decode()
