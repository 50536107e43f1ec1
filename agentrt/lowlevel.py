"""The sharp public API: one trap (:func:`suspend`) and one machine (:class:`Machine`).

``suspend`` is the only function that ever yields back to the driver.  Everything
higher level -- tool calls, model calls, prompts, timers, gather -- is a payload
handed to ``suspend``.  A :class:`Machine` drives one plain ``async def`` step by
step and can checkpoint the whole suspended chain to bytes at any suspension
(:meth:`Machine.get`) and rebuild it anywhere (:meth:`Machine.set`).
"""

from __future__ import annotations

import contextvars
import inspect
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, ClassVar, Generic, TypeVar  # Any: a suspend payload and its answer can be anything

import attrs

from agentrt import _codec
from agentrt import keys as _keys
from agentrt._codec import Bind
from agentrt._codec import Requirement as _Requirement
from agentrt._context import Restored as _Restored
from agentrt._context import RunContext as _RunContext
from agentrt._context import carry as _carry
from agentrt._context import install as _install_context
from agentrt._context import split_root as _split_root
from agentrt._frames import abandon as _abandon
from agentrt._frames import install as _install_frames
from agentrt._frames import register_trap as _register_trap
from agentrt._frames import restored_pending
from agentrt.exceptions import CorruptBlob, ForeignAwaitable

__all__ = ["Done", "Machine", "suspend"]

T = TypeVar("T")

_install_frames()
_install_context()

_CHECKPOINT: tuple[str, str | None, int | None] = ("checkpoint", None, None)
# What Machine.set accepts, made once (frozen): one per opt-in, not one per restore
_SET_SIGNED_ONLY = _Requirement(
    signed=True, kind="checkpoint", unsigned_hint="Machine.set(blob, allow_unsigned=True)", env_opt_in=True
)
_SET_UNSIGNED_OK = _Requirement(
    signed=False, kind="checkpoint", unsigned_hint="Machine.set(blob, allow_unsigned=True)"
)


class _Request:
    """The marker a ``suspend()`` trap yields first: ``(_REQUEST, payload)`` is an agentrt request.

    One private instance, never stored in a blob (the codec refuses it like any unmarked
    object) and not reachable by name from one (a blob can reference functions and
    classes only), so nothing but the trap below can yield it.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "<agentrt suspend>"


_REQUEST = _Request()


@types.coroutine
def suspend(payload: Any) -> Generator[tuple[_Request, Any], Any, Any]:
    """Hand ``payload`` to the driver and wait for the value it sends back.

    ``await suspend(x)`` is the one trap of agentrt.  The payload must be a value
    a checkpoint can hold (see ``docs/blob-format.md``).
    """
    # A generator, so that a suspension runs no Python-level method: it yields a plain tuple
    # (a tuple subclass would cost a type call, ~2x a minimal trap; issue 16) and returns what
    # the driver sends.  The frame engine recognises it by its code (agentrt._frames._trap).
    return (yield (_REQUEST, payload))


def _suspend_iterator(payload: Any) -> Generator[tuple[_Request, Any], Any, Any]:
    """``suspend(payload)`` for an ``__await__`` method (the SDK's requests, ``_Trap``).

    ``__await__`` must return an iterator, and CPython refuses a generator-based coroutine
    there ("__await__() returned a coroutine"), so this is the same trap without
    ``@types.coroutine``: no extra frame sits between the awaiting frame and the trap.
    """
    return (yield (_REQUEST, payload))


def _is_request(yielded: Any) -> bool:
    """Whether a value a coroutine yielded is an agentrt request (the trap's marker tuple)."""
    return type(yielded) is tuple and len(yielded) == 2 and yielded[0] is _REQUEST


@_codec.serializable
class _Trap:
    """How a checkpoint stores a ``suspend()`` trap: its payload, as a plain value.

    Blobs have always held the trap as ``agentrt.lowlevel:_Trap`` with the payload as its
    state; the name and the state stay, so old and new blobs read the same.  A restore puts
    a fresh trap generator in its place where it is awaited (agentrt._frames._trap); one met
    anywhere else (a trap made but not awaited yet) can still be awaited.
    """

    __slots__ = ("payload",)

    def __init__(self, payload: Any) -> None:
        self.payload = payload

    def __await__(self) -> Generator[tuple[_Request, Any], Any, Any]:
        return _suspend_iterator(self.payload)

    def __getstate__(self) -> Any:
        return self.payload

    def __setstate__(self, payload: Any) -> None:
        self.payload = payload

    def __repr__(self) -> str:
        return f"suspend({self.payload!r})"


_register_trap((suspend, _suspend_iterator), _Trap)


@attrs.frozen
class Done(Generic[T]):
    """The agent returned ``value``."""

    value: T


class Machine:
    """Drive one agent coroutine from suspension to suspension.

    ``Machine(fn, *args, **kwargs)`` creates the coroutine but runs nothing.
    ``step(value)`` delivers ``value`` to the pending ``suspend`` and returns the
    next payload, or :class:`Done` when the agent returns.  ``get()`` checkpoints
    the suspended chain; ``Machine.set(blob)`` restores it.

    The agent runs in a ``contextvars.Context`` of its own, copied from the context the
    Machine was made (or restored) in: context variables it sets are its own, and those
    set inside the run are part of its checkpoint (``agentrt._context``).
    """

    __slots__ = ("_context", "_coro", "_finished", "_pending", "_run_in", "_send", "_started")

    #: Test seam (used by the ``--agentrt-roundtrip`` pytest option): when set, every
    #: resume first checkpoints the machine and continues on the restored copy, so a
    #: test suite proves that each suspension survives ``get()`` / ``Machine.set()``.
    #: It is called with the machine and must return the blob to restore from.
    roundtrip_hook: ClassVar[Callable[[Machine], bytes] | None] = None

    def __init__(self, fn: Callable[..., Coroutine[Any, Any, Any]], /, *args: Any, **kwargs: Any) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(
                f"Machine needs an 'async def' function, got {fn!r}; define the agent with 'async def'."
            )
        self._pending: Any = None
        self._started = False
        self._finished = False
        self._adopt(fn(*args, **kwargs), _RunContext())

    def _adopt(self, coro: Coroutine[Any, Any, Any], context: _RunContext) -> None:
        """Drive ``coro`` in ``context`` from now on."""
        self._coro = coro
        self._context = context
        # Both bound once: a step is ``self._run_in(self._send, value)``, which costs a few
        # nanoseconds more than ``coro.send(value)`` (binding them per step cost ~40 ns).
        self._send: Callable[[Any], Any] = coro.send
        self._run_in: Callable[..., Any] = context.context.run

    @classmethod
    def _restored(cls, coro: Coroutine[Any, Any, Any], pending: Any, context: _Restored = ()) -> Machine:
        """A machine around a restored chain, already suspended on ``pending``, its context variables
        (``context``) set again on top of the context it is restored in."""
        machine = cls.__new__(cls)
        machine._pending = pending
        machine._started = True
        machine._finished = False
        machine._adopt(coro, _RunContext(context))
        return machine

    def copy_context(self) -> contextvars.Context:
        """A copy of the context the agent runs in: its context variables as it set them (and as a
        restore brought them back).  The runtime runs each tool call of the run in such a copy, so
        log and trace context the agent binds reaches its tools; a copy, so a tool cannot change them."""
        return self._context.context.copy()

    @property
    def pending(self) -> Any:
        """The payload the agent waits on (None before the first step)."""
        return self._pending

    @property
    def done(self) -> bool:
        return self._finished

    def step(self, value: Any = None) -> Any:
        """Resume the agent with ``value``; return the next payload or :class:`Done`."""
        if self._started and not self._finished and Machine.roundtrip_hook is None:
            # The hot path, inlined on purpose: it is _resume(self._coro.send, value) without
            # the extra call, which costs ~10% of a suspend/step cycle (benchmarks/checkpoint.py).
            try:
                yielded = self._run_in(self._send, value)
            except StopIteration as stop:
                self._finished = True
                self._pending = None
                return Done(stop.value)
            except BaseException:
                self._finished = True
                self._pending = None
                raise
            if type(yielded) is tuple and len(yielded) == 2 and yielded[0] is _REQUEST:  # _is_request
                payload = self._pending = yielded[1]
                return payload
            return self._foreign(yielded)
        return self._resume(*self._checked(self._coro.send, value))

    def throw(self, exc: BaseException) -> Any:
        """Raise ``exc`` at the pending ``suspend``; otherwise like :meth:`step`."""
        if not self._started:
            raise RuntimeError(
                "Machine.throw() before the first step(): the agent has not reached a suspend yet."
            )
        return self._resume(*self._checked(self._coro.throw, exc))

    def _checked(self, resume: Callable[[Any], Any], arg: Any) -> tuple[Callable[[Any], Any], Any]:
        """The checks of a resume that is not the plain hot path; returns what to call."""
        if self._finished:
            raise RuntimeError(
                "this Machine's agent has already finished; create a new Machine to run it again."
            )
        if not self._started and arg is not None:
            raise TypeError(
                "the first step() of a Machine takes no value: the agent has not reached a suspend yet."
            )
        if Machine.roundtrip_hook is not None and self._started:
            resume = self._roundtrip(resume)
        self._started = True
        return resume, arg

    def _resume(self, resume: Callable[[Any], Any], arg: Any) -> Any:
        try:
            yielded = self._run_in(resume, arg)
        except StopIteration as stop:
            self._finished = True
            self._pending = None
            return Done(stop.value)
        except BaseException:
            self._finished = True
            self._pending = None
            raise
        if not _is_request(yielded):
            return self._foreign(yielded)
        payload = self._pending = yielded[1]
        return payload

    def _foreign(self, yielded: Any) -> Any:
        self._finished = True
        self._run_in(self._coro.close)
        raise ForeignAwaitable(
            f"AR102: the agent yielded {yielded!r} to agentrt, which only understands "
            "agentrt requests (await suspend(...), task.tools..., task.gather, task.sleep). "
            "Replace asyncio primitives such as asyncio.sleep / gather / create_task inside "
            "agent code with task.sleep / task.gather, or move the I/O into a tool."
        )

    def _roundtrip(self, resume: Callable[[Any], Any]) -> Callable[[Any], Any]:
        hook = Machine.roundtrip_hook
        assert hook is not None
        restored = Machine.set(hook(self))
        old = self._coro
        self._adopt(restored._coro, restored._context)
        restored._finished = True  # the coroutine now belongs to this machine
        _abandon(old)
        return self._coro.send if resume == old.send else self._coro.throw

    def discard(self) -> None:
        """Let go of the agent without running its ``finally`` blocks or ``__exit__`` methods.

        A checkpointed run continues elsewhere; the process that drops its Machine
        must not run the agent's cleanup code.  Garbage collection of a Machine
        does the same.  (To end a run for good, ``throw`` an exception into it.)
        """
        if not self._finished:
            self._finished = True
            _abandon(self._coro)

    def __del__(self) -> None:
        try:  # noqa: SIM105 - never raise from a finalizer (contextlib.suppress: three calls per Machine)
            self.discard()
        except Exception:
            pass

    def get(self, *, use_cloudpickle: bool = False) -> bytes:
        """Checkpoint the suspended chain to bytes, signed with the project's key; the machine stays usable.

        The blob holds the context variables set inside the run (``agentrt._context``);
        one no restore could find again, or whose value cannot be checkpointed, is refused
        here with ``CannotCrossAwait`` naming it.  The key is ``AGENTRT_BLOB_KEY``, else the
        project key file (created on first use; see :mod:`agentrt.keys`).
        """
        ring = _keys.project_keyring(create=True)
        return self.get_bound(ring.write if ring is not None else b"", _CHECKPOINT, use_cloudpickle)

    def get_bound(self, key: bytes, bind: Bind, use_cloudpickle: bool = False) -> bytes:
        """:meth:`get` for a host that keeps checkpoints of its own: signed with ``key`` (not the
        project's; ``b""``: unsigned) and bound to ``bind`` -- what the blob is of, and where it
        belongs: ``(purpose, run_id, seq)``, or ``(purpose, run_id, seq, store_id, chain)`` with the
        store's identity and the digest of the blob before it (docs/blob-format.md, "binding").
        :meth:`set_bound` with a requirement that names the same binding refuses the blob anywhere
        else: another run, another sequence, another store, or a replayed older blob.  The runtime
        checkpoints every run this way (``agentrt._runtime.encoding.checkpoint_bind``)."""
        if not self._started or self._finished:
            state = "finished" if self._finished else "not started (call step() first)"
            raise RuntimeError(f"Machine.get() needs a suspended agent; this one is {state}.")
        # an empty context carries nothing: skip the call (a checkpoint of plain data pays for it)
        root = _carry(self._coro, self._context) if len(self._context.context) else self._coro
        return _codec.dumps(root, use_cloudpickle=use_cloudpickle, key=key, bind=bind)

    @classmethod
    def set(
        cls,
        blob: bytes,
        *,
        allow_modules: tuple[str, ...] = (),
        allow_cloudpickle: bool = False,
        allow_unsigned: bool = False,
    ) -> Machine:
        """Rebuild a suspended machine from ``blob``.

        Code and classes are resolved only in modules already imported or named in
        ``allow_modules``; nothing named only by the blob is imported or run.  The
        blob must be signed with a key of this project (``AGENTRT_BLOB_KEY`` or the
        project key file) unless ``allow_unsigned=True`` (or ``AGENTRT_ALLOW_UNSIGNED=1``):
        an unsigned blob still goes through every safety check, but it can resume any
        imported coroutine at any of its awaits with locals of its author's choosing.
        """
        ring = _keys.project_keyring()
        requirement = _SET_UNSIGNED_OK if allow_unsigned else _SET_SIGNED_ONLY  # and AGENTRT_ALLOW_UNSIGNED
        return cls.set_bound(blob, ring, requirement, allow_modules, allow_cloudpickle)

    @classmethod
    def set_bound(
        cls,
        blob: bytes,
        ring: _keys.Keyring | None,
        requirement: _Requirement,
        allow_modules: tuple[str, ...] = (),
        allow_cloudpickle: bool = False,
    ) -> Machine:
        """:meth:`set` for a host that keeps checkpoints of its own: the blob is verified with
        ``ring``'s keys (None: no keys, so only an unsigned blob the requirement allows) and must
        meet ``requirement`` -- whether it must be signed, and the binding it must carry (see
        :meth:`get_bound`; ``agentrt._codec.Requirement``).  Everything else is as :meth:`set`:
        nothing named only by the blob is imported or run, and a blob that fails a check raises
        (``CorruptBlob``, ``HistoryRefused``, ``IncompatibleBlob``) before any of its frames exists."""
        session: list[Any] = []
        root = _codec.loads(
            blob,
            allow_modules=allow_modules,
            allow_cloudpickle=allow_cloudpickle,
            keys=ring.read if ring is not None else (),
            key_source=ring.source if ring is not None else "",
            require=requirement,
            session=session,
        )
        coro, carried = _split_root(root)
        try:
            if not inspect.iscoroutine(coro):
                raise CorruptBlob(f"the blob holds a {type(coro).__name__}, not a suspended agent coroutine")
            yielded = restored_pending(coro)
            if not (type(yielded) is tuple and len(yielded) == 2 and yielded[0] is _REQUEST):  # _is_request
                what = type(yielded).__name__
                raise CorruptBlob(f"the restored agent re-suspended on {what}, not on an agentrt suspend()")
        except BaseException:
            for ctx in session:
                ctx.refuse()  # no finally / __exit__ of anything the blob built runs
            raise
        for ctx in session:
            ctx.accept()
        return cls._restored(coro, yielded[1], carried.restored if carried is not None else ())
