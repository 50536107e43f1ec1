"""Plain names and confined paths: what a gate decision or a model's tool call may put in a file name.

Task, lane and specialist ids, run ids, slugs and phases all end up in file names under the project
(``.agentrt/context/<run>/<specialist>-<task>.md``, ``.agentrt/agents/<name>.md``...).  They come
from a spec, a model or a human at the gate, so each is checked twice: as a plain name where it
enters (the gate, the proposal), and again at every write, where the path is resolved and must stay
inside its directory -- so a name that slipped past one check (``x/../../../ESCAPED``) or a symlinked
directory still cannot write outside the project.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentrt.exceptions import ContractError

__all__ = ["MAX_NAME_CHARS", "check_name", "confined", "is_plain_name"]

MAX_NAME_CHARS = 100
# a letter or digit first (no ".", "..", "-option" or hidden file), then letters, digits, "._-"
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def is_plain_name(value: object) -> bool:
    """Whether ``value`` is a plain name: ``[A-Za-z0-9][A-Za-z0-9._-]*``, at most 100 characters."""
    return isinstance(value, str) and len(value) <= MAX_NAME_CHARS and _PLAIN.match(value) is not None


def check_name(value: object, where: str, key: str) -> str:
    """``value`` if it is a plain name, else :class:`ContractError` naming ``where``/``key`` and the rule."""
    if not is_plain_name(value):
        raise ContractError(
            where,
            key,
            f"{value!r} is not a plain name: use letters, digits, '.', '_' and '-' (starting with a "
            f"letter or digit, at most {MAX_NAME_CHARS} characters); no '/', '\\\\' or '..'",
        )
    assert isinstance(value, str)  # for mypy: is_plain_name checked it
    return value


def confined(root: str | os.PathLike[str], *parts: str) -> Path:
    """``root / parts...`` resolved, refused (:class:`ContractError`) unless it stays inside ``root``."""
    base = Path(root).resolve()
    path = base.joinpath(*parts).resolve()
    if path != base and not path.is_relative_to(base):
        raise ContractError(
            f"path {os.path.join(*parts) if parts else ''!r}",
            None,
            f"resolves to {path}, outside {base}; names in team files must be plain names",
        )
    return path
