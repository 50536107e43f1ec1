"""The names a blob may call: agentrt's reconstructor entry points.

A payload is a pickle whose *only* globals are ``agentrt._codec._wire.<name>``
for the names below.  While encoding, the module-level functions defined here
are placeholders: reduce tuples name them, and the C ``Pickler`` writes each one
as a global (it checks that ``_wire.<name>`` is the object, which is why they
live in a real module).  They are never called.  While decoding,
``find_class`` maps a name to the bound reconstructor of *that load's* decode
context and refuses everything else, so a blob cannot reach any other callable.

``SAFE`` reconstructors return plain values (dates, iterators over builtin
containers, cells...).  ``REFERENCING`` ones return, or are built from,
functions, classes and instances found by name in imported modules; a blob that
uses them must say so in its header flags, and unless the blob is authenticated
with ``AGENTRT_BLOB_KEY`` the loader first proves with a dry run that the pickle
never calls or mutates what they return (see ``_decode``).  ``SIGNED_ONLY`` ones
(``call``, ``reopen``) run what the pickle protocol would run; only a signed blob
may name them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn  # Any: placeholders stand in for any callable

WIRE_MODULE = __name__

SAFE: frozenset[str] = frozenset(
    {
        "complex",
        "date",
        "time",
        "datetime",
        "timedelta",
        "timezone",
        "decimal",
        "uuid",
        "range",
        "slice",
        "pattern",
        "const",
        "seqiter",
        "dictiter",
        "setiter",
        "enumerate",
        "zip",
        "cell",
        "deque",
        "odict",
        "counter",
        "ext",
        "state",
    }
)

REFERENCING: frozenset[str] = frozenset(
    {
        "ref",
        "descr",
        "fn",
        "method",
        "bmethod",
        "partial",
        "obj",
        "exc",
        "enum",
        "map",
        "filter",
        "ddict",
        "call",
        "reopen",
    }
)

#: Reconstructors only a signed blob may call: they call what the pickle protocol would call
#: (an importable callable named by module:qualname, ``__setstate__``, a registered ``reopen``).
#: A signed blob was written by a holder of the key, who is as trusted as the code; an unsigned
#: one is refused as soon as it names one of these (see ``_decode``).
SIGNED_ONLY: frozenset[str] = frozenset({"call", "reopen"})

ALL_NAMES: frozenset[str] = SAFE | REFERENCING


def _placeholder(name: str) -> Callable[..., Any]:
    def placeholder(*args: object) -> NoReturn:
        raise RuntimeError(f"agentrt wire placeholder {name!r} is a name in blobs, never called")

    placeholder.__name__ = placeholder.__qualname__ = name
    placeholder.__module__ = WIRE_MODULE
    return placeholder


#: name -> placeholder function (also bound as a module attribute of that name).
PLACEHOLDERS: dict[str, Callable[..., Any]] = {name: _placeholder(name) for name in sorted(ALL_NAMES)}
globals().update(PLACEHOLDERS)

#: The placeholders whose use sets the "referencing" header flag.
REFERENCING_PLACEHOLDERS: frozenset[Callable[..., Any]] = frozenset(
    PLACEHOLDERS[name] for name in REFERENCING
)
ALL_PLACEHOLDERS: frozenset[Callable[..., Any]] = frozenset(PLACEHOLDERS.values())
#: The placeholders a blob must announce in its header's ``needs`` (``_format``): reconstructors
#: added after format 2, so that an agentrt without them answers IncompatibleBlob, not CorruptBlob.
NEEDS_PLACEHOLDERS: frozenset[Callable[..., Any]] = frozenset(PLACEHOLDERS[name] for name in SIGNED_ONLY)
