"""The host-side normalizer: a result as a model or a host hands it over, made into one of the six
registry contracts, or refused.

Results arrive in a few shapes besides a plain JSON object: a JSON string, a Markdown answer holding
one fenced JSON block, the structured-output envelope ``{"result": {...}, "reasoning": ...}``.  The
normalizer unwraps exactly these, then validates against the closed registry
(:func:`~agentrt.teams.contracts.validate_contract`), so everything downstream sees a checked
contract.  It targets the six contracts only: prose, two or more blocks, an unknown or missing
``schema_version`` where one is required, or a value that fails its contract is a
:class:`~agentrt.teams.ContractError` naming what was wrong -- never accepted as prose.  With
``expect``, a value without a ``schema_version`` is read as that contract (the caller knows what it
asked for); a value naming another contract is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any  # Any: results are JSON of any shape

from agentrt.exceptions import ContractError
from agentrt.teams.contracts import CONTRACTS, validate_contract

__all__ = ["normalize_contract"]

_WHERE = "result normalizer"
_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*(?:json)?[ \t]*\n(.*?)^\1[ \t]*$", re.M | re.S)


def _from_text(text: str) -> Any:
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(stripped)
        except ValueError as exc:
            raise ContractError(_WHERE, None, f"the text looks like JSON but is not: {exc}") from None
    blocks = _FENCE.findall(text)
    if not blocks:
        raise ContractError(_WHERE, None, "is prose, not a result: no JSON object and no fenced JSON block")
    if len(blocks) > 1:
        raise ContractError(_WHERE, None, f"holds {len(blocks)} fenced blocks; a result is exactly one")
    try:
        return json.loads(blocks[0][1])
    except ValueError as exc:
        raise ContractError(_WHERE, None, f"the fenced block is not valid JSON: {exc}") from None


def normalize_contract(value: Any, expect: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(schema_version, result)``: ``value`` unwrapped and validated as one of the six contracts."""
    if expect is not None and expect not in CONTRACTS:
        raise ContractError(
            _WHERE, "expect", f"{expect!r} is not one of the six contracts ({', '.join(CONTRACTS)})"
        )
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        value = _from_text(value)
    if isinstance(value, Mapping) and "schema_version" not in value and set(value) <= {"result", "reasoning"}:
        value = value.get("result")  # the structured-output envelope
        if isinstance(value, str):
            value = _from_text(value)
    if not isinstance(value, Mapping):
        raise ContractError(_WHERE, None, f"a result is a JSON object, got {type(value).__name__}")
    result = dict(value)
    if expect is not None:
        named = result.setdefault("schema_version", expect)
        if named != expect:
            raise ContractError(_WHERE, "schema_version", f"expected a {expect} result, got {named!r}")
    version = validate_contract(result)
    return version, result
