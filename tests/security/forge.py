"""Forging frame records as an attacker who can write blobs would (tests only).

``forge(machine, mutate)`` re-encodes the machine's suspended chain with the frame
extension's records passed through ``mutate(code, args, state) -> (args, state)``:
``args`` is the frame header (kind, code index, site, bound locals, NULL mask,
exception flag, cells) and ``state`` the list [exception, *locals, *stack values].
The result is signed with ``key`` (b"": unsigned), as a key holder or a forger would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from agentrt._codec import dumps
from agentrt._codec._extension import STORED_AS, extension_named
from agentrt._frames import _capture

Mutator = Callable[[Any, list[Any], list[Any]], tuple[list[Any], list[Any]]]


@contextlib.contextmanager
def mutated_frames(mutate: Mutator) -> Iterator[None]:
    ext: Any = extension_named("frame")
    original = type(ext).reduce

    def reduce(self: Any, obj: Any, ctx: Any) -> tuple[tuple[Any, ...], Any]:
        args, state = original(self, obj, ctx)
        if state is None or args is STORED_AS:  # STORED_AS: a suspend() trap, a plain value
            return args, state
        code = _capture.capture(obj).code
        new_args, new_state = mutate(code, list(args), list(state))
        return tuple(new_args), new_state

    type(ext).reduce = reduce
    try:
        yield
    finally:
        type(ext).reduce = original


def forge(root: Any, mutate: Mutator, *, key: bytes = b"", bind: Any = ("checkpoint", None, None)) -> bytes:
    with mutated_frames(mutate):
        return dumps(root, key=key, bind=bind)


def stack_of(args: list[Any], state: list[Any]) -> tuple[int, list[bool]]:
    """(index in ``state`` where the stack values start, the NULL mask)."""
    return 1 + len(args[3]), list(args[4])
