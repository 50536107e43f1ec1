"""``agentrt fork ID --at SEQ``: a new run that continues from an earlier checkpoint of another.

The store has no "create a run from a blob" operation, so a fork is built from the
store's public methods, the way the runtime itself writes a run:

1. ``create_run`` with the source run's agent and input (status ``running``);
2. ``acquire_lease`` under a fresh owner, ``save_checkpoint`` of the blob at the
   same sequence number (so idempotency keys and sub-run ids stay ``NEW:SEQ``),
   with a ``forked`` event recording where it came from;
3. ``set_waiting`` when the pending request is a question (as the runtime would
   park it), then ``release_lease``.  Any other request is dispatched by the next
   ``agentrt resume NEW`` (a run ``running`` without a live lease is resumable).

The blob holds the agent's ``Task``, which carries the run id its events are
recorded under; the fork's copy is rebound to the new id (decode, set, encode),
so ``task.ui.notify`` / ``task.console`` of the fork land in the fork.  Results
journaled for the source run are not copied: the fork dispatches the pending
request again (with its own idempotency key).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import types
import uuid
from typing import TYPE_CHECKING, Any  # Any: a pending request's payload is the agent's

import attrs

from agentrt import _codec
from agentrt._codec import Bind, Requirement
from agentrt._context import Carried, split_root
from agentrt._frames import FINISHED, abandon, capture, restored_pending
from agentrt._runtime.encoding import store_id_of
from agentrt.exceptions import ForkError as ForkError
from agentrt.keys import Keyring, keyring_for_store

if TYPE_CHECKING:
    from agentrt.stores.base import Store

__all__ = ["ForkError", "ForkResult", "fork_run"]

_LEASE_SECONDS = 30.0
_TASK_MODULE = "agentrt._sdk.task"
_RUN_ID_FIELDS = ("run_id", "_run_id")


@attrs.frozen
class ForkResult:
    run_id: str
    from_run_id: str
    seq: int
    status: str
    pending: Any
    rebound_tasks: int  # Task-like objects moved to the new run id


def fork_run(store: Store, run_id: str, seq: int, new_run_id: str | None = None) -> ForkResult:
    """Create a run in ``store`` that continues from checkpoint ``seq`` of ``run_id``."""
    from agentrt._sdk.agent import load_agent
    from agentrt.exceptions import RunNotFound
    from agentrt.stores.base import NewRun, make_owner

    rec = store.get_run(run_id)
    if rec is None:
        raise RunNotFound(run_id, store.location)
    blob = store.get_checkpoint(run_id, seq)
    if blob is None:
        raise ForkError(_missing_checkpoint(store, run_id, seq))
    info = next((c for c in store.list_checkpoints(run_id) if c.seq == seq), None)
    pending = info.pending if info is not None else None
    if rec.agent.startswith("<local>:"):
        raise ForkError(
            f"run {run_id!r} was started with an agent that cannot be imported by name "
            f"({rec.agent[len('<local>:') :]}); only the runtime that started it can continue it, so it "
            "cannot be forked in another process"
        )
    load_agent(rec.agent)  # imports the agent's module, as `agentrt resume` would
    new_id = new_run_id or f"{run_id}-fork-{uuid.uuid4().hex[:6]}"
    ring = keyring_for_store(store)
    new_blob, rebound = rebind_run_id(blob, run_id, new_id, seq=seq, ring=ring, store_id=store_id_of(store))

    owner = make_owner()
    # Created already leased to us: no worker may claim the fork before its checkpoint is written.
    store.create_run(
        NewRun(run_id=new_id, agent=rec.agent, input=rec.input, owner=owner, ttl_seconds=_LEASE_SECONDS)
    )
    try:
        event = (
            seq - 1,
            0,
            "forked",
            None,
            {
                "message": f"forked from run {run_id} at checkpoint {seq}",
                "from_run_id": run_id,
                "from_seq": seq,
            },
        )
        from agentrt._codec import code_requirement

        store.save_checkpoint(
            new_id, owner, seq, new_blob, pending, [event], code_required=code_requirement(new_blob)
        )
        status = "running"
        if isinstance(pending, dict) and pending.get("kind") == "ask":
            store.set_waiting(new_id, owner, "reply", None, [])
            status = "waiting"
    except BaseException as exc:
        # Never leave a fork without its checkpoint: `resume` would start it from its input.
        try:
            store.finish_run(
                new_id, owner, "failed", error={"type": type(exc).__name__, "message": f"fork failed: {exc}"}
            )
        finally:
            store.release_lease(new_id, owner)
        raise
    store.release_lease(new_id, owner)
    return ForkResult(new_id, run_id, seq, status, pending, rebound)


def _missing_checkpoint(store: Store, run_id: str, seq: int) -> str:
    kept = [c.seq for c in store.list_checkpoints(run_id)]
    if not kept:
        return f"run {run_id!r} has no checkpoints"
    return (
        f"run {run_id!r} has no checkpoint {seq}; it keeps checkpoints {kept[0]}..{kept[-1]} "
        f"(see `agentrt show {run_id}`)"
    )


def rebind_run_id(
    blob: bytes,
    old: str,
    new: str,
    *,
    seq: int | None = None,
    ring: Keyring | None = None,
    store_id: str | None = None,
) -> tuple[bytes, int]:
    """``blob`` with every ``Task`` / ``task.ui`` / ``task.console`` of run ``old`` rebound to ``new``.

    With ``ring``, the blob must be signed checkpoint ``seq`` of ``old`` and comes back
    signed as checkpoint ``seq`` of ``new``; without, it is re-encoded with the codec's
    defaults.  With ``store_id`` the new blob is sealed for that store (the fork is the first
    checkpoint of its run: no chain).  Returns how many task objects were rebound.
    """
    if ring is None:
        obj = _codec.loads(blob)
    else:
        require = Requirement(signed=True, kind="checkpoint", run_id=old, seq=seq)
        obj = _codec.loads(blob, keys=ring.read, key_source=ring.source, require=require)
    frames = (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType)
    chain = split_root(obj)[0]  # a run that set context variables: they are rebound and kept too
    try:
        if isinstance(chain, frames):
            with contextlib.suppress(Exception):
                restored_pending(chain)
        found = [o for o in _walk(obj) if _is_task_like(o, old)]
        if not found and ring is None:
            return blob, 0
        for task in found:
            for name in _RUN_ID_FIELDS:
                if getattr(task, name, None) == old:
                    object.__setattr__(task, name, new)  # attrs frozen: set like attrs' own __init__ does
        if ring is None:
            return _codec.dumps(obj), len(found)
        bind: Bind = (
            ("checkpoint", new, seq) if store_id is None else ("checkpoint", new, seq, store_id, None)
        )
        return _codec.dumps(obj, key=ring.write, bind=bind), len(found)
    finally:
        if isinstance(chain, frames):
            abandon(chain)


def _is_task_like(obj: object, run_id: str) -> bool:
    tp = type(obj)
    if tp.__module__ != _TASK_MODULE or not attrs.has(tp):
        return False
    return any(getattr(obj, name, None) == run_id for name in _RUN_ID_FIELDS)


def _walk(root: object) -> list[object]:
    """Every object reachable from ``root`` the way the codec stores it (frames, containers, state)."""
    seen: set[int] = set()
    out: list[object] = []
    todo = [root]
    frames = (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType)
    while todo:
        obj = todo.pop()
        if id(obj) in seen or obj is None or type(obj) in (bool, int, float, str, bytes, complex):
            continue
        seen.add(id(obj))
        out.append(obj)
        if isinstance(obj, frames):
            state = capture(obj)
            if state.status == FINISHED:
                continue
            todo.extend(state.local_values)
            todo.extend(state.stack_values)
            todo.extend(state.cells)
            if state.exc is not None:
                todo.append(state.exc)
        elif type(obj) is Carried:
            todo.append(obj.coro)
            todo.extend(value for _scheme, _names, value in obj.entries)
        elif isinstance(obj, types.CellType):
            with contextlib.suppress(ValueError):  # an empty cell
                todo.append(obj.cell_contents)
        elif isinstance(obj, dict):
            todo.extend(obj.keys())
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(obj)
        elif isinstance(obj, BaseException):
            todo.extend(obj.args)
            todo.extend(v for v in (obj.__cause__, obj.__context__) if v is not None)
        elif isinstance(obj, types.MethodType):
            todo.append(obj.__self__)
        elif isinstance(obj, functools.partial):
            todo.extend((obj.func, *obj.args, *obj.keywords.values()))
        elif isinstance(obj, types.FunctionType):
            todo.extend(c for c in obj.__closure__ or ())
            todo.extend(obj.__defaults__ or ())
        elif attrs.has(type(obj)):
            todo.extend(getattr(obj, f.name, None) for f in attrs.fields(type(obj)))  # type: ignore[arg-type]  # attrs.has() narrows to an attrs class; mypy cannot see it
        elif dataclasses.is_dataclass(obj):
            todo.extend(getattr(obj, f.name, None) for f in dataclasses.fields(obj))
        elif isinstance(getattr(obj, "__dict__", None), dict):
            todo.extend(obj.__dict__.values())
        elif hasattr(obj, "payload"):  # the suspend trap
            todo.append(obj.payload)
    return out
