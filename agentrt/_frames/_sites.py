"""Suspension sites described so that they can be found again in *changed* code.

A checkpoint names its code by digest, and a frame's position by a byte offset
into that exact code.  Both stop meaning anything once the function is edited.
To decide whether a suspended frame can move to the new version of its function
(``agentrt upgrade``), each frame record also carries a :class:`RecordInfo`,
written once per (code, site) and cached:

* the names of the code's locals and closure variables (the record itself only
  holds indices), and which locals are live at the site;
* a :class:`SiteRef`: the control-flow position of the suspension (its kind, its
  ordinal among the function's suspension sites, how many there are), the source
  text of the ``await`` expression, and the role of every value-stack entry
  beneath it (``for_iterator``, ``with_exit``, ``operand`` ...), which is what
  "the same enclosing ``for`` / ``with`` blocks" means at the bytecode level.

The info travels as plain data, readable from a blob without building any object
(:mod:`agentrt._upgrade`): format 1 wrote the tuple of str/int of :func:`record_info`,
format 2 writes its compact JSON text, one string per record (:func:`record_info_text`).
"""

from __future__ import annotations

import ast
import dis
import json
import linecache
from types import CodeType

import attrs

from agentrt._frames._liveness import Site, analyze
from agentrt._percode import PerCode

#: Bumped when the layout of the tuple written by :func:`record_info` changes.
INFO_VERSION = 1

# call_* roles depend on the object at run time (a NULL or a bound self); their
# shape is what matters, so they compare as one role.
_CALL_ROLES = frozenset({"call_callable", "call_self", "call_null"})
_MAX_SOURCE_CHARS = 400


@attrs.frozen
class SiteRef:
    """Where a frame is suspended, in terms that survive an edit of the function."""

    kind: str  # SiteKind value: "await", "yield", "async-yield"
    ordinal: int  # index among the code's suspension sites, in bytecode order
    count: int  # how many suspension sites the code has
    source: str  # the suspending expression as written (whitespace collapsed); "" if unknown
    occurrence: int  # index among the code's sites with the same (normalised) source
    stack: tuple[str, ...]  # role of each value-stack entry, bottom first (the awaited object last)
    lineno: int | None

    def as_tuple(self) -> tuple[object, ...]:
        return (self.kind, self.ordinal, self.count, self.source, self.occurrence, self.stack, self.lineno)

    @classmethod
    def from_tuple(cls, raw: object) -> SiteRef | None:
        """Parse what a blob says (untrusted): None when it is not a well-formed site."""
        if type(raw) is not tuple or len(raw) != 7:
            return None
        kind, ordinal, count, source, occurrence, stack, lineno = raw
        ints_ok = all(type(n) is int and n >= 0 for n in (ordinal, count, occurrence))
        if not (ints_ok and type(kind) is str and type(source) is str):
            return None
        if type(stack) is not tuple or not all(type(role) is str for role in stack):
            return None
        if lineno is not None and type(lineno) is not int:
            return None
        return cls(kind, ordinal, count, source, occurrence, stack, lineno)

    def label(self) -> str:
        """How reports and ``@agentrt.migrate(site=...)`` name this site."""
        line = f" (line {self.lineno})" if self.lineno is not None else ""
        return f"{self.kind} #{self.ordinal + 1}{line}: {self.source or '?'}"


@attrs.frozen
class RecordInfo:
    """The part of a frame record that lets a later version of the code judge it."""

    varnames: tuple[str, ...]  # co_varnames of the checkpointed code
    cellnames: tuple[str, ...]  # co_freevars + co_cellvars, the order of the record's cells
    live: tuple[int, ...]  # indices into varnames of the locals live at the site
    site: SiteRef | None  # None for a frame that has not started

    @classmethod
    def from_tuple(cls, raw: object) -> RecordInfo | None:
        if type(raw) is not tuple or len(raw) != 5 or raw[0] != INFO_VERSION:
            return None
        _, varnames, cellnames, live, site_raw = raw
        if not all(type(t) is tuple and all(type(s) is str for s in t) for t in (varnames, cellnames)):
            return None
        if type(live) is not tuple or not all(type(i) is int and 0 <= i < len(varnames) for i in live):
            return None
        site = None if site_raw is None else SiteRef.from_tuple(site_raw)
        if site_raw is not None and site is None:
            return None
        return cls(varnames, cellnames, live, site)

    @classmethod
    def from_record(cls, raw: object) -> RecordInfo | None:
        """The info a frame record holds: a tuple (format 1) or its JSON text (format 2)."""
        if type(raw) is str:
            return cls.from_tuple(_info_from_text(raw))
        return cls.from_tuple(raw)


def normalized(source: str) -> str:
    """A key for comparing two suspending expressions: their syntax tree, so that formatting,
    comments and line breaks inside the expression do not count."""
    try:
        return ast.dump(ast.parse(source.strip(), mode="eval"))
    except SyntaxError:
        return " ".join(source.split())


def _info_from_text(text: str) -> object:
    """The info tuple back from its JSON text (untrusted): lists become tuples where the tuple has them."""
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if type(raw) is not list or len(raw) != 5:
        return None
    version, varnames, cellnames, live, site = raw
    if not all(type(part) is list for part in (varnames, cellnames, live)):
        return None
    if site is not None:
        if type(site) is not list or len(site) != 7 or type(site[5]) is not list:
            return None
        site = (*site[:5], tuple(site[5]), site[6])
    return (version, tuple(varnames), tuple(cellnames), tuple(live), site)


#: Per code: its sites by yield offset; the frame-record info and its JSON text by status.
_REFS: PerCode[dict[int, SiteRef]] = PerCode("site refs")
_INFOS: PerCode[dict[int, tuple[object, ...]]] = PerCode("record infos")
_INFO_TEXTS: PerCode[dict[int, str]] = PerCode("record info texts")


def site_refs(code: CodeType) -> dict[int, SiteRef]:
    """Every suspension site of ``code`` (by yield offset) as a :class:`SiteRef` (cached)."""
    cached = _REFS.get(code)
    if cached is not None:
        return cached
    sites = analyze(code).sites
    positions = {
        instr.offset: instr.positions for instr in dis.get_instructions(code) if instr.offset in sites
    }
    offsets = sorted(sites)
    linecache.checkcache(code.co_filename)  # a file edited since it was last read is read again
    texts = {offset: _checked(code, _source(code, positions.get(offset))) for offset in offsets}
    seen: dict[str, int] = {}
    refs: dict[int, SiteRef] = {}
    for ordinal, offset in enumerate(offsets):
        site = sites[offset]
        key = normalized(texts[offset]) if texts[offset] else f"?{ordinal}"
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        refs[offset] = SiteRef(
            site.kind.value,
            ordinal,
            len(offsets),
            texts[offset],
            occurrence,
            _stack_roles(code, site),
            site.lineno,
        )
    return _REFS.put(code, refs)


def record_info(code: CodeType, status: int) -> tuple[object, ...]:
    """The info tuple written into the frame record of a frame of ``code`` at ``status``
    (a yield offset, or a negative "not started" marker); cached per (code, status)."""
    infos = _INFOS.get(code)
    if infos is None:
        infos = _INFOS.put(code, {})
    cached = infos.get(status)
    if cached is not None:
        return cached
    site = analyze(code).sites.get(status) if status >= 0 else None
    ref = site_refs(code).get(status) if site is not None else None
    info: tuple[object, ...] = (
        INFO_VERSION,
        code.co_varnames,
        code.co_freevars + code.co_cellvars,
        tuple(i for i in site.live_locals if i < code.co_nlocals) if site is not None else (),
        ref.as_tuple() if ref is not None else None,
    )
    infos[status] = info
    return info


def record_info_text(code: CodeType, status: int) -> str:
    """:func:`record_info` as the compact JSON text a format-2 frame record holds (cached)."""
    texts = _INFO_TEXTS.get(code)
    if texts is None:
        texts = _INFO_TEXTS.put(code, {})
    text = texts.get(status)
    if text is None:
        text = texts[status] = json.dumps(
            record_info(code, status), ensure_ascii=False, separators=(",", ":")
        )
    return text


def _source(code: CodeType, positions: object) -> str:
    """The text of the suspending expression, from the instruction's source span (3.11+)."""
    lineno = getattr(positions, "lineno", None)
    end_lineno = getattr(positions, "end_lineno", None)
    col = getattr(positions, "col_offset", None)
    end_col = getattr(positions, "end_col_offset", None)
    if lineno is None:
        return ""
    lines = [linecache.getline(code.co_filename, n) for n in range(lineno, (end_lineno or lineno) + 1)]
    if not any(lines):
        return ""
    if col is not None and end_col is not None and end_lineno is not None:
        # positions count UTF-8 bytes
        encoded = [line.encode() for line in lines]
        if len(encoded) == 1:
            encoded[0] = encoded[0][col:end_col]
        else:
            encoded[0] = encoded[0][col:]
            encoded[-1] = encoded[-1][:end_col]
        text = b"".join(encoded).decode(errors="replace")
    else:
        text = "".join(lines)
    return " ".join(text.split())[:_MAX_SOURCE_CHARS]


def _checked(code: CodeType, text: str) -> str:
    """``text`` if it can be the source of ``code``'s suspension, else "" (unknown).

    The file is read when a code object is first checkpointed; if it was replaced
    on disk by a deploy before that, the line no longer belongs to the running code.
    Every name the expression mentions must then be one the code uses.
    """
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text  # ``async for`` / ``async with`` headers: kept for display, compared as text
    known = set(code.co_names) | set(code.co_varnames) | set(code.co_freevars) | set(code.co_cellvars)
    for node in ast.walk(tree):
        name = (
            node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        )
        if name is not None and name not in known:
            return ""
    return text


def _stack_roles(code: CodeType, site: Site) -> tuple[str, ...]:
    """What each value-stack entry at ``site`` is (the inspector's bytecode analysis)."""
    depth = site.stack_depth
    if depth == 0:
        return ()
    from agentrt._frames._stack import describe_slots

    try:
        infos = describe_slots(
            code, site.yield_offset, depth, (False,) * depth, site.kind.value == "await", [None] * depth
        )
    except Exception:  # an unknown shape: every slot generic, so only an identical depth matches
        return ("value",) * depth
    return tuple("call" if info.role in _CALL_ROLES else info.role for info in infos)
