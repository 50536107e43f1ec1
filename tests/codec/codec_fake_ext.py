"""A stand-in for the frame engine's Extension: 'frames' with code, locals and a line."""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any

from agentrt._codec._extension import DecodeContext, EncodeContext, Location, register_extension


class FakeFrame:
    """Holds a code object (recorded by identity) and locals (a dict), like a suspended frame."""

    __slots__ = ("code", "lineno", "locals", "module", "primed")

    def __init__(
        self, code: types.CodeType, module: str, local_vars: dict[str, Any], lineno: int = 7
    ) -> None:
        self.code = code
        self.module = module
        self.locals = local_vars
        self.lineno = lineno
        self.primed = False


class FakeFrameExtension:
    name = "test.fakeframe"
    types: tuple[type, ...] = (FakeFrame,)

    def __init__(self) -> None:
        self.after_load_order: list[str] = []

    def reduce(self, obj: FakeFrame, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        return (ctx.code_ref(obj.code, obj.module), obj.lineno), obj.locals

    def create(self, ctx: DecodeContext, index: int, lineno: int) -> FakeFrame:
        frame = FakeFrame(ctx.code(index), ctx.code_module(index), {}, lineno)

        def prime() -> None:
            frame.primed = True
            self.after_load_order.append(frame.code.co_qualname)

        ctx.after_load(prime)
        return frame

    def set_state(self, ctx: DecodeContext, obj: FakeFrame, state: Any) -> None:
        obj.locals = state

    def children(self, obj: FakeFrame) -> Iterable[tuple[str, Any, Location | None]]:
        where = Location(obj.code.co_qualname, obj.code.co_filename, obj.lineno)
        for name, value in obj.locals.items():
            yield name, value, where


class Callback:
    """A mutable, callable extension object (not 'stack-inert'): blobs holding it need verification."""

    def __init__(self, value: Any = None) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value


class CallbackExtension:
    name = "test.callback"
    types: tuple[type, ...] = (Callback,)

    def reduce(self, obj: Callback, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        return (), obj.value

    def create(self, ctx: DecodeContext) -> Callback:
        return Callback()

    def set_state(self, ctx: DecodeContext, obj: Callback, state: Any) -> None:
        obj.value = state

    def children(self, obj: Callback) -> Iterable[tuple[str, Any, Location | None]]:
        yield "value", obj.value, None


class FailingAfterLoad:
    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind


class FailingExtension:
    name = "test.failing"
    types: tuple[type, ...] = (FailingAfterLoad,)

    def reduce(self, obj: FailingAfterLoad, ctx: EncodeContext) -> tuple[tuple[Any, ...], Any]:
        return (obj.kind,), None

    def create(self, ctx: DecodeContext, kind: str) -> FailingAfterLoad:
        def fail() -> None:
            from agentrt.exceptions import IncompatibleBlob

            if kind == "agentrt":
                raise IncompatibleBlob("resume code cannot be synthesized")
            raise RuntimeError("priming failed")

        ctx.after_load(fail)
        return FailingAfterLoad(kind)

    def set_state(self, ctx: DecodeContext, obj: FailingAfterLoad, state: Any) -> None:
        pass

    def children(self, obj: FailingAfterLoad) -> Iterable[tuple[str, Any, Location | None]]:
        return ()


FAKE_FRAMES = FakeFrameExtension()
register_extension(FAKE_FRAMES)
register_extension(CallbackExtension())
register_extension(FailingExtension())


def frame_of(fn: Any, local_vars: dict[str, Any], lineno: int = 7) -> FakeFrame:
    return FakeFrame(fn.__code__, fn.__module__, local_vars, lineno)
