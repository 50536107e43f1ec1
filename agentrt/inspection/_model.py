"""The frame dump as data: what ``agentrt dump`` prints and ``--json`` serialises.

Everything here is plain data (strings, ints, tuples of these classes), computed
once from a suspended chain; renderers and ``diff`` read only this model.
"""

from __future__ import annotations

from types import CodeType
from typing import Any  # Any: JSON summaries of any shape

import attrs

from agentrt._frames import InstrRef
from agentrt.inspection._values import ValueView

__all__ = [
    "CodeEntry",
    "Dump",
    "FrameView",
    "HeaderView",
    "Source",
    "SourceLine",
    "StackEntry",
    "UpgradeFrame",
    "UpgradeView",
    "Variable",
]


@attrs.frozen
class Source:
    """Where the dumped blob came from."""

    kind: str  # "run" (a checkpoint of a run in a store), "file", "machine" (a live Machine), "bytes"
    run_id: str | None = None
    seq: int | None = None
    latest: bool = False
    path: str | None = None
    agent: str | None = None

    def describe(self) -> str:
        if self.kind == "run":
            latest = ", the latest" if self.latest else ""
            return f"run {self.run_id}, checkpoint {self.seq}{latest}"
        if self.kind == "file":
            return f"blob file {self.path}"
        if self.kind == "machine":
            return "live Machine (not a blob)"
        return "blob"


@attrs.frozen
class CodeEntry:
    module: str
    qualname: str
    digest: str


@attrs.frozen
class HeaderView:
    format_version: int
    python: str
    codec: str
    payload_size_bytes: int
    codes: tuple[CodeEntry, ...]


@attrs.frozen
class Variable:
    name: str
    value: ValueView | None  # None: an empty closure cell


@attrs.frozen
class SourceLine:
    lineno: int
    text: str
    current: bool


@attrs.frozen
class StackEntry:
    position: int
    null: bool
    role: str
    label: str
    value: ValueView | None
    producer: InstrRef | None
    consumer: InstrRef | None
    iterator: dict[str, Any] | None = None  # {"index", "remaining", "count"} of a builtin iterator


@attrs.frozen
class FrameView:
    """One frame of the chain (or one held by it), as the dump shows it."""

    index: int
    kind: str  # coroutine, generator, async generator
    module: str
    qualname: str
    filename: str
    lineno: int | None
    state: str  # suspended, not started, finished, unreadable
    site_kind: str | None  # await, yield, async-yield
    yield_offset_bytes: int | None
    source: tuple[SourceLine, ...] = ()
    locals: tuple[Variable, ...] = ()
    dead: tuple[str, ...] = ()  # locals not live at the suspension: not in the checkpoint
    unbound: tuple[str, ...] = ()  # live, but unbound when the frame suspended
    cells: tuple[Variable, ...] = ()
    stack: tuple[StackEntry, ...] = ()
    exception: ValueView | None = None
    awaiting: str | None = None  # "frame N", "pending request", or a description
    held_by: str | None = None  # for frames outside the chain: where the chain holds them
    error: str | None = None  # why the frame could not be read
    code: CodeType | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def in_chain(self) -> bool:
        return self.held_by is None


@attrs.frozen
class UpgradeFrame:
    """One frame an upgrade moved: from which code and site to which, and what became of its locals."""

    function: str  # module:qualname
    old_digest: str
    new_digest: str
    old_site: str
    new_site: str
    mapped: tuple[str, ...] = ()  # carried over by name
    supplied: tuple[str, ...] = ()  # returned by the migration
    dropped: tuple[str, ...] = ()  # not kept by the new code


@attrs.frozen
class UpgradeView:
    """One ``agentrt upgrade`` of a run, from its ``upgrade`` event."""

    seq: int  # the checkpoint it wrote (replaced, or added by a restart)
    n: int
    at: float
    how: str  # "moved" (the checkpoint replaced under its seq) or "restarted" (a new checkpoint)
    frames: tuple[UpgradeFrame, ...]
    kept_blob: bool = False  # the replaced blob is kept: ``agentrt diff RUN SEQ SEQ`` compares them
    #: a restart: {"function", "from_seq", "from_site", "safe_point", "site", "new_site", "withdrawn"}
    restart: dict[str, Any] | None = None


@attrs.frozen
class Dump:
    """A whole checkpoint (or live chain), outermost frame first."""

    source: Source
    header: HeaderView | None
    frames: tuple[FrameView, ...] | None  # None when the blob could not be decoded here
    frames_error: str | None = None  # why not
    pending: ValueView | None = None
    pending_summary: Any = None  # the runtime's JSON summary of a request, when it is one
    value: ValueView | None = None  # a blob that holds a plain value instead of a chain
    upgrades: tuple[UpgradeView, ...] = ()  # the run's upgrade history (a dump of a run's checkpoint)
    context: tuple[Variable, ...] = ()  # the context variables set inside the run (agentrt._context)

    @property
    def chain(self) -> tuple[FrameView, ...]:
        return tuple(f for f in self.frames or () if f.in_chain)
