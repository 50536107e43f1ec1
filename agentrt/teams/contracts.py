"""The reference's wire contracts: the ``guild.handoff.v2`` envelope and the closed registry of six
result contracts.

Everything here is pure: a dict goes in, a validated value (or a :class:`ContractError` naming the
key and the rule) comes out.  Wire names are the reference's own, so envelopes written by its
tools validate here and the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any  # Any: parsed YAML/JSON, checked field by field here

import attrs

from agentrt.exceptions import ContractError

__all__ = [
    "CONTRACTS",
    "HANDOFF_KEYS",
    "HANDOFF_SCHEMA",
    "STATUSES",
    "TIERS",
    "Handoff",
    "validate_contract",
    "validate_handoff",
]

HANDOFF_SCHEMA = "guild.handoff.v2"
TIERS = ("cheap", "mid", "powerful")
STATUSES = ("done", "blocked", "escalate")
INJECTION = ("clean", "flagged", "unverified")
SUMMARY_MAX_CHARS = 600
NOTES_MAX_CHARS = 200

#: Every key the envelope may carry; the validator rejects any other (strict).
HANDOFF_KEYS = (
    "schema_version",
    "task_id",
    "tier",
    "status",
    "summary",
    "artifacts",
    "issues",
    "escalate_reason",
    "learnings",
    "notes",
    "injection_clean",
)
_HANDOFF_REQUIRED = ("schema_version", "task_id", "tier", "status", "summary", "artifacts", "issues")


@attrs.frozen
class Handoff:
    """A validated ``guild.handoff.v2`` envelope: a specialist lane's result."""

    task_id: str
    tier: str
    status: str
    summary: str
    artifacts: tuple[str, ...] = ()
    issues: tuple[str, ...] = ()
    escalate_reason: str | None = None
    learnings: tuple[str, ...] | None = None
    notes: str | None = None
    injection_clean: str | None = None
    schema_version: str = HANDOFF_SCHEMA

    def to_dict(self) -> dict[str, Any]:
        """The envelope as wire JSON (optional keys only when set), which validates again."""
        out: dict[str, Any] = {
            "schema_version": self.schema_version,
            "task_id": self.task_id,
            "tier": self.tier,
            "status": self.status,
            "summary": self.summary,
            "artifacts": list(self.artifacts),
            "issues": list(self.issues),
        }
        if self.escalate_reason is not None:
            out["escalate_reason"] = self.escalate_reason
        if self.learnings is not None:
            out["learnings"] = list(self.learnings)
        if self.notes is not None:
            out["notes"] = self.notes
        if self.injection_clean is not None:
            out["injection_clean"] = self.injection_clean
        return out


# -- small checks, each raising with the contract, key and rule


def _nonempty_str(where: str, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ContractError(where, key, f"must be a non-empty string, got {value!r}")
    return value


def _one_of(where: str, obj: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = obj.get(key)
    if value not in allowed:
        raise ContractError(where, key, f"must be one of {', '.join(allowed)}; got {value!r}")
    return str(value)


def _str_list(where: str, obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ContractError(where, key, f"must be an array of strings (may be empty), got {value!r}")
    return tuple(value)


def _bool(where: str, obj: Mapping[str, Any], key: str) -> bool:
    value = obj.get(key)
    if not isinstance(value, bool):
        raise ContractError(where, key, f"must be a boolean, got {value!r}")
    return value


def _require(where: str, obj: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if key not in obj:
            raise ContractError(where, key, "is required and missing")


def _mapping(where: str, obj: Any) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise ContractError(where, None, f"must be a JSON object, got {type(obj).__name__}")
    return obj


# -- the envelope


def validate_handoff(obj: Any) -> Handoff:
    """Validate a ``guild.handoff.v2`` envelope strictly (the reference's table, key by key)."""
    where = HANDOFF_SCHEMA
    obj = _mapping(where, obj)
    for key in obj:
        if key not in HANDOFF_KEYS:
            raise ContractError(
                where, key, f"is not an envelope key (strict: allowed keys are {', '.join(HANDOFF_KEYS)})"
            )
    _require(where, obj, _HANDOFF_REQUIRED)
    if obj["schema_version"] != HANDOFF_SCHEMA:
        raise ContractError(
            where, "schema_version", f'must be exactly "{HANDOFF_SCHEMA}", got {obj["schema_version"]!r}'
        )
    task_id = _nonempty_str(where, obj, "task_id")
    tier = _one_of(where, obj, "tier", TIERS)
    status = _one_of(where, obj, "status", STATUSES)
    summary = _nonempty_str(where, obj, "summary")
    if len(summary) > SUMMARY_MAX_CHARS:
        raise ContractError(
            where, "summary", f"must be at most {SUMMARY_MAX_CHARS} characters, got {len(summary)}"
        )
    artifacts = _str_list(where, obj, "artifacts")
    issues = _str_list(where, obj, "issues")
    reason = obj.get("escalate_reason")
    if status == "escalate":
        reason = _nonempty_str(where, obj, "escalate_reason")
    elif reason is not None and not isinstance(reason, str):
        raise ContractError(where, "escalate_reason", f"must be a string, got {reason!r}")
    learnings = _str_list(where, obj, "learnings") if "learnings" in obj else None
    notes = obj.get("notes")
    if "notes" in obj:
        if not isinstance(notes, str):
            raise ContractError(where, "notes", f"must be a string, got {notes!r}")
        if len(notes) > NOTES_MAX_CHARS:
            raise ContractError(
                where, "notes", f"must be at most {NOTES_MAX_CHARS} characters, got {len(notes)}"
            )
    injection = _one_of(where, obj, "injection_clean", INJECTION) if "injection_clean" in obj else None
    return Handoff(
        task_id=task_id,
        tier=tier,
        status=status,
        summary=summary,
        artifacts=artifacts,
        issues=issues,
        escalate_reason=reason,
        learnings=learnings,
        notes=notes,
        injection_clean=injection,
    )


# -- the other five result contracts


def _orchestration_core(where: str, obj: Mapping[str, Any]) -> None:
    """What all four orchestration contracts require: their own wire string, ``run_id`` and ``ts``."""
    _require(where, obj, ("schema_version", "run_id", "ts"))
    _nonempty_str(where, obj, "run_id")
    ts = obj["ts"]
    if isinstance(ts, bool) or not (isinstance(ts, (int, float)) or (isinstance(ts, str) and ts.strip())):
        raise ContractError(where, "ts", f"must be a timestamp (ISO string or number), got {ts!r}")


def _phase_result(obj: Mapping[str, Any]) -> None:
    where = "guild.phase_result.v1"
    _orchestration_core(where, obj)
    _require(where, obj, ("phase", "status", "gate_passed", "outputs"))
    _one_of(where, obj, "phase", ("init", "ideate", "plan", "build", "qa", "ops"))
    _one_of(where, obj, "status", ("complete", "blocked", "partial"))
    _bool(where, obj, "gate_passed")
    _str_list(where, obj, "outputs")


def _qa_result(obj: Mapping[str, Any]) -> None:
    where = "guild.qa_result.v1"
    _orchestration_core(where, obj)
    _require(where, obj, ("checks", "gaps", "failures", "release_ok"))
    checks = obj["checks"]
    if not isinstance(checks, list):
        raise ContractError(where, "checks", f"must be an array of {{id, status}}, got {checks!r}")
    for i, check in enumerate(checks):
        key = f"checks[{i}]"
        if not isinstance(check, Mapping):
            raise ContractError(where, key, f"must be an object {{id, status}}, got {check!r}")
        if not isinstance(check.get("id"), str) or not check["id"]:
            raise ContractError(where, f"{key}.id", f"must be a non-empty string, got {check.get('id')!r}")
        if check.get("status") not in ("pass", "fail", "skip"):
            raise ContractError(
                where, f"{key}.status", f"must be one of pass, fail, skip; got {check.get('status')!r}"
            )
    _str_list(where, obj, "gaps")
    _str_list(where, obj, "failures")
    _bool(where, obj, "release_ok")


def _host_event(obj: Mapping[str, Any]) -> None:
    where = "guild.host_event.v1"
    _orchestration_core(where, obj)
    _require(where, obj, ("host_id", "event_type", "name"))
    _nonempty_str(where, obj, "host_id")
    _one_of(where, obj, "event_type", ("hook", "tool", "session"))
    _nonempty_str(where, obj, "name")
    if "detail" in obj and not isinstance(obj["detail"], str):
        raise ContractError(where, "detail", f"must be a string when present, got {obj['detail']!r}")


def _permission_receipt(obj: Mapping[str, Any]) -> None:
    where = "guild.permission_receipt.v1"
    _orchestration_core(where, obj)
    _require(where, obj, ("requested_mode", "selected_mode", "gate_policy", "scope"))
    _nonempty_str(where, obj, "requested_mode")
    _nonempty_str(where, obj, "selected_mode")
    _one_of(where, obj, "gate_policy", ("prompted_inline", "autonomous", "forbidden"))
    _str_list(where, obj, "scope")


def _review_result(obj: Mapping[str, Any]) -> None:
    """Lenient: the four keys the reader needs; a present ``schema_version`` must be its own."""
    where = "review_result.v1"
    if "schema_version" in obj and obj["schema_version"] != where:
        raise ContractError(
            where, "schema_version", f'must equal "{where}" when present, got {obj["schema_version"]!r}'
        )
    _require(where, obj, ("packet_id", "artifact_sha256_reviewed", "verdict", "blocking_findings"))
    _nonempty_str(where, obj, "packet_id")
    _nonempty_str(where, obj, "artifact_sha256_reviewed")
    _nonempty_str(where, obj, "verdict")
    if not isinstance(obj["blocking_findings"], list):
        raise ContractError(where, "blocking_findings", f"must be an array, got {obj['blocking_findings']!r}")


def _handoff(obj: Mapping[str, Any]) -> None:
    validate_handoff(obj)


#: The closed registry: wire ``schema_version`` -> (validation mode, validator).  Six, none deferred.
CONTRACTS: dict[str, tuple[str, Callable[[Mapping[str, Any]], None]]] = {
    HANDOFF_SCHEMA: ("strict", _handoff),
    "review_result.v1": ("lenient", _review_result),
    "guild.phase_result.v1": ("strict", _phase_result),
    "guild.permission_receipt.v1": ("strict", _permission_receipt),
    "guild.host_event.v1": ("strict", _host_event),
    "guild.qa_result.v1": ("strict", _qa_result),
}


def validate_contract(obj: Any) -> str:
    """Validate ``obj`` against the registry contract its ``schema_version`` names; return that name.

    A value with no ``schema_version`` is read as ``review_result.v1`` (whose reader tolerates an
    absent one).  Anything else -- an unknown version, prose, a non-object -- is a
    :class:`ContractError`, never accepted as prose.
    """
    obj = _mapping("result contract", obj)
    version = obj.get("schema_version", "review_result.v1")
    if version not in CONTRACTS:
        raise ContractError(
            "result contract",
            "schema_version",
            f"{version!r} is not in the closed registry of six contracts ({', '.join(CONTRACTS)})",
        )
    CONTRACTS[version][1](obj)
    return str(version)
