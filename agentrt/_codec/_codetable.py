"""The code table of a blob being written, shared by the C encoder and the opt-in cloudpickle one.

Kept apart from ``_encode`` so that ``_cloud`` (imported only when cloudpickle is
asked for) and ``_encode`` (which imports ``_cloud`` then) do not import each other.
"""

from __future__ import annotations

import sys
import types

import attrs

from agentrt._codec._code_identity import code_digest, findable
from agentrt._codec._format import FORMAT_VERSION
from agentrt._codec._reduce import CONST_FLOAT_IDS, Unresolvable
from agentrt._codec._refs import imported_module
from agentrt._percode import PerCode

__all__ = ["PROTOCOL", "CodeTable"]

PROTOCOL = 5


class CodeTable:
    """The ``EncodeContext`` half of an encoder: the blob's code table and header flags.

    The table is created on first use, so encoding plain data pays nothing for it.
    """

    flags: int = 0
    format_version: int = FORMAT_VERSION  # raised by an extension whose objects need a newer format
    codes: list[tuple[str, str, str]] | tuple[()] = ()
    needs: tuple[str, ...] = ()  # what a reader must know beyond format 2 (``_format``'s ``needs``)
    shared_floats: dict[int, tuple[float]] | None = None  # float id -> its box (``_reduce._share_floats``)
    reads: set[object]  # the reconstructors the blob names (``_reduce.reduce_value``; set per encoder)
    _code_index: dict[int, int] | None = None
    _code_keep: list[types.CodeType]

    def code_ref(self, code: types.CodeType, module: str) -> int:
        """Record ``code``'s identity in the header (once per blob) and return its index."""
        if self._code_index is None:
            self._code_index, self.codes, self._code_keep = {}, [], []
        index = self._code_index.get(id(code))
        if index is None:
            index = len(self.codes)
            self.codes.append(_identity(code, module))  # type: ignore[union-attr]  # codes is a list once indexed
            self._code_index[id(code)] = index
            self._code_keep.append(code)  # ids stay unique while the blob is written
        return index

    def need(self, feature: str) -> None:
        """Announce ``feature`` (a reconstructor newer than format 2) in the header's ``needs``."""
        if feature not in self.needs:
            self.needs = (*self.needs, feature)

    def need_format(self, version: int) -> None:
        """Write the blob as format ``version`` at least (an extension's object needs it)."""
        if version > self.format_version:
            self.format_version = version


@attrs.frozen
class _Named:
    """A code's header entries, per module name, with the module object each was found in; and the
    ids of its float constants, in ``CONST_FLOAT_IDS`` while this lives (see ``_IDENTITIES``)."""

    by_module: dict[str, tuple[object, tuple[str, str, str]]]
    float_ids: tuple[int, ...]


def _unname(named: _Named, _ids: set[int] = CONST_FLOAT_IDS) -> None:  # bound now: usable at exit
    _ids.difference_update(named.float_ids)


#: Every code named so far (PerCode: held weakly, bounded).  Its float constants' ids are in
#: ``CONST_FLOAT_IDS`` exactly while its entry lives -- the code, so its constants, are alive --
#: and leave with it, before an id could be reused.
_IDENTITIES: PerCode[_Named] = PerCode("code identities", on_drop=_unname)
_modules = sys.modules


def _identity(code: types.CodeType, module: str) -> tuple[str, str, str]:
    """The header entry for ``code``, after checking ``resolve_code`` will find it again.

    ``findable``'s answer is remembered here with the entry, per (code, module object) as
    ``findable`` itself remembers it, so a chain checkpointed again and again pays one dict
    lookup per frame.  A code met for the first time adds the ids of its float constants to
    ``CONST_FLOAT_IDS`` (see ``_IDENTITIES``).
    """
    named = _IDENTITIES.get(code)
    if named is not None:
        known = named.by_module.get(module)
        if known is not None and known[0] is _modules.get(module):
            return known[1]
    reason = findable(code, module)
    if reason is not None:
        raise Unresolvable(reason)
    identity = (module, code.co_qualname, code_digest(code))
    if named is None:
        float_ids = tuple(id(const) for const in code.co_consts if type(const) is float)
        named = _IDENTITIES.put(code, _Named({}, float_ids))
        CONST_FLOAT_IDS.update(float_ids)
    named.by_module[module] = (imported_module(module), identity)
    return identity
