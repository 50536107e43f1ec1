"""Issue 26's checkpoint target: the floor of a leaner checkpoint design, beside agentrt's and cloudpickle.

    python benchmarks/checkpoint_floor.py            # 15 interleaved rounds
    python benchmarks/checkpoint_floor.py --quick    # smoke: 3 rounds (no ratio asserted)

``benchmarks/checkpoint.py`` compares a checkpoint round trip (``Machine.get`` + ``Machine.set`` +
one ``step``, the restored machine dropped inside the timed loop) with ``cloudpickle`` of the same
live values.  This prototype asks how close a design can come that keeps agentrt's engine -- its
frame capture, its validated per-shape plans and synthesized resume code, the ``suspend()`` trap,
``abandon`` where a drop would run code -- and replaces the codec around it for **plain frames**
(every live local and stack value plain data, no closure cells, no exception being handled):

* **get**: ``capture`` each frame of the chain (one C read of its kept slots), look up its shape's
  record (cached per shape), and pickle ``(codes, [(shape, locals, stack)], payload)`` with the C
  pickler and nothing else: no ``reducer_override``, no per-object callback, no code table walk;
  then a keyed BLAKE2b MAC over the payload (as agentrt signs blobs).
* **set**: verify the MAC, unpickle with the stock C unpickler (as agentrt's signed restores skip
  the opcode checks: the key holder who wrote the payload could name any callable anyway; an
  unsigned blob would need an unpickler that refuses every global), resolve the codes (cached per
  code list, as agentrt's ``_RESOLVED``), build each frame by calling its shape's resume function
  (made once per shape: agentrt makes a function object per restored frame), innermost first, each
  awaiting the one inside it, the innermost a fresh trap, and prime the chain with ONE
  ``send(None)`` from the outermost -- no dry step, no per-frame priming.
* **step**: one ``send`` of the value; then the restored chain is dropped inside the timed loop, as
  in checkpoint.py, and none of its code may run then: agentrt walks and marks every dropped chain
  (``_engine.abandon``, ~2 µs a frame in Python); the prototype does so only for a chain whose drop
  would reach a handler of its own -- CPython closes a dropped coroutine by throwing
  ``GeneratorExit`` where it waits, which reaches its code only through a ``try``, ``with`` or
  ``async for`` around that await (:func:`drop_runs_code`, known once per shape) -- and leaves the
  rest to CPython, where dropping costs next to nothing.  ``check_drops`` shows both sides before
  anything is timed: a chain with a handler around an await is abandoned and its handler does not
  run, and the same chain dropped without that runs it.

A frame that is not plain is out of its scope (the design would hand it to today's codec).  The
prototype's restore is checked before anything is timed: it steps exactly like an uninterrupted
machine, for five steps, and a second checkpoint of the same machine restores as well.

Results: ``checkpoint-floor-<python>[-quick].json`` in the results folder (benchmarks/_env.py).
"""

from __future__ import annotations

import argparse
import dis
import hashlib
import hmac
import json
import pickle
import platform
import sys
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
import _env  # noqa: E402
import checkpoint_agents  # noqa: E402
from _timing import run_interleaved  # noqa: E402

from agentrt._codec._code_identity import code_digest, resolve_code  # noqa: E402
from agentrt._frames import _layout as L  # noqa: E402
from agentrt._frames import _plans  # noqa: E402
from agentrt._frames._capture import capture, view_of  # noqa: E402
from agentrt._frames._engine import abandon  # noqa: E402
from agentrt._frames._trap import fresh_trap, trap_payload  # noqa: E402
from agentrt.lowlevel import Machine  # noqa: E402

KEY = bytes(range(32))
CHECKPOINT_AT = 3  # as checkpoint.py: a steady-state suspension of every scenario agent
SCENARIOS = ("a_flat20", "b_chain5")
_MAC = 32
_PLAIN_ATOMS = frozenset({type(None), bool, int, float, str, bytes, complex})
_GENERATOR_LIKE = frozenset({types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType})
_PLAIN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})


class NotPlain(Exception):
    """A frame this prototype does not cover (today's codec would take it)."""


def _is_plain(value: Any, depth: int = 0) -> bool:
    tp = type(value)
    if tp in _PLAIN_ATOMS:
        return True
    if tp in _PLAIN_CONTAINERS and depth < 20:
        items = value.items() if tp is dict else value
        if tp is dict:
            return all(_is_plain(k, depth + 1) and _is_plain(v, depth + 1) for k, v in items)
        return all(_is_plain(v, depth + 1) for v in items)
    return False


class ShapeCodec:
    """The prototype: plain frames pickled by the C pickler alone (see the module docstring)."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self._identities: dict[int, tuple[types.CodeType, tuple[str, str, str]]] = {}
        self._functions: dict[tuple[int, bytes], list[Any]] = {}
        self._sites: dict[tuple[int, int], tuple[Any, ...]] = {}
        self._resolved: dict[tuple[tuple[str, str, str], ...], tuple[tuple[types.CodeType, Any], ...]] = {}

    def _identity(self, code: types.CodeType, module: str) -> tuple[str, str, str]:
        known = self._identities.get(id(code))
        if known is None or known[0] is not code:
            known = self._identities[id(code)] = (code, (module, code.co_qualname, code_digest(code)))
        return known[1]

    def _site(self, coro: Any, frame: Any, actual: types.CodeType, lasti: int) -> tuple[Any, ...]:
        """What reading a frame suspended at ``lasti`` of ``actual`` takes, worked out once per site
        (as attrs generates ``__init__`` once per class): the C slot getter, the shape's record
        bytes and the code's identity.  The first frame met at a site goes through ``capture``."""
        state = capture(coro)  # also checks everything a checkpoint must refuse
        if state.cells or state.exc is not None:
            raise NotPlain("closure cells or an exception being handled")
        view = view_of(actual)
        code = state.code
        offset = lasti if view.original_offset is None else view.original_offset.get(lasti, -1)
        getter, nlive, dead_slots = view.site_pick[offset]
        top = view.nslots + view.analysis.sites[offset].stack_depth
        key = (id(code), state.kind, state.status, state.bound_locals, state.null_mask, False)
        shape = _plans.record_parts(key, code)[1]
        entry = (actual, top, getter, nlive, dead_slots, shape, self._identity(code, state.module))
        self._sites[(id(actual), lasti)] = entry
        return entry

    def get(self, coro: Any, check_plain: bool = False, bind: bytes = b"") -> bytes:
        """The signed blob of ``coro``'s chain; ``bind`` (say the store, run and seq it is written
        for) is covered by the MAC and not stored, so the blob restores only where it belongs."""
        codes: list[tuple[str, str, str]] = []
        frames: list[tuple[bytes, tuple[Any, ...], tuple[Any, ...]]] = []
        sites = self._sites
        parts = L.GEN_PARTS[types.CoroutineType]
        adjust = L.LASTI_ADJUST
        current = coro
        while type(current) is types.CoroutineType:
            frame, actual, _ = parts(current)
            lasti = frame.f_lasti - adjust
            site = sites.get((id(actual), lasti))
            if site is None or site[0] is not actual:
                site = self._site(current, frame, actual, lasti)
            read = L.read_picked(current, site[1], site[2], site[4])
            if (
                read is None
                or (read[1] and not _GENERATOR_LIKE.isdisjoint(map(type, read[1])))
                or L.exception_being_handled(current) is not None
            ):
                raise NotPlain("an unbound local, a dead generator or an exception being handled")
            picked, nlive = read[0], site[3]
            values, stack = picked[:nlive], picked[nlive:-1]
            if check_plain and not (_is_plain(values) and _is_plain(stack)):
                raise NotPlain(f"{actual.co_qualname} holds a value that is not plain data")
            codes.append(site[6])
            frames.append((site[5], values, stack))
            current = picked[-1]
        body = pickle.dumps((tuple(codes), frames, trap_payload(current)), 5)
        signed = bind + body if bind else body
        return hashlib.blake2b(signed, key=self.key, digest_size=_MAC).digest() + body

    def _function(self, code: types.CodeType, globals_: dict[str, Any], shape: bytes) -> list[Any]:
        """The resume function of a shape without closure cells, made once: calling it with a frame's
        state is all a restore does per frame (agentrt makes a function object per restored frame).
        Its last item: whether dropping such a frame runs any of its code (None until a restore of the
        shape is primed and its resume code's place is known: see :func:`drop_runs_code`)."""
        key = (id(code), shape)
        plan = _plans.PLANS.get(key)
        if plan is None or plan.code is not code:
            plan = _plans.PLANS[key] = _plans.plan(code, *_plans.plan_fields(key))
        if plan.ncells:
            raise NotPlain("closure cells")
        resumed = plan.resumed
        function = types.FunctionType(resumed.code, globals_, resumed.original.co_name, None, ())
        function.__qualname__ = resumed.original.co_qualname
        site_runs = plan.site is not None and drop_runs_code(code, plan.site.yield_offset)
        made = self._functions[key] = [code, function, plan.expected_len, True if site_runs else None]
        return made

    def set(self, blob: bytes, bind: bytes = b"") -> tuple[Any, Any, bool]:
        """The restored, primed chain, the payload it re-suspended with (``bind``: as ``get``'s), and
        whether dropping the chain would run any of its code (then :func:`release` abandons it)."""
        body = blob[_MAC:]
        signed = bind + body if bind else body
        if not hmac.compare_digest(
            hashlib.blake2b(signed, key=self.key, digest_size=_MAC).digest(), blob[:_MAC]
        ):
            raise ValueError("the prototype blob's MAC does not verify")
        # A blob whose MAC verifies was written by a key holder, who could name any callable in a
        # payload anyway (agentrt's signed restores skip the opcode checks for that reason, blob
        # format §8): the stock C unpickler reads it.
        codes, frames, payload = pickle.loads(body)
        resolved = self._resolved.get(codes)
        if resolved is None:
            found = []
            for module, qualname, digest in codes:
                code = resolve_code(module, qualname, digest)
                found.append((code, sys.modules[module].__dict__))
            resolved = self._resolved[codes] = tuple(found)
        functions = self._functions
        runs_code = False
        learning: list[list[Any]] = []  # shapes whose resume code's drop is not known yet
        awaited: Any = fresh_trap(payload)
        for (code, globals_), (shape, local_values, stack) in zip(
            reversed(resolved), reversed(frames), strict=True
        ):
            made = functions.get((id(code), shape))
            if made is None or made[0] is not code:
                made = self._function(code, globals_, shape)
            if made[3] is None:
                learning.append(made)
            elif made[3]:
                runs_code = True
            state = [None, *local_values, *stack, awaited]
            if len(state) != made[2]:
                raise ValueError("the prototype blob's frame does not fit its shape")
            awaited = made[1](state)  # a new coroutine of the shape's resume code
        yielded = awaited.send(None)  # primes the whole chain: each prologue, then the trap
        if learning:
            runs_code = _learn_drops(awaited, frames, learning, functions, resolved) or runs_code
        return awaited, yielded[1], runs_code


def drop_runs_code(code: types.CodeType, offset: int) -> bool:
    """Whether dropping a coroutine suspended at ``offset`` of ``code`` runs any of its code.

    CPython closes a dropped coroutine by throwing ``GeneratorExit`` where it waits; only an exception
    handler covering that place (a ``try``, ``with``, ``async for``) leads into its code.  The handlers
    the compiler adds around every await (``CLEANUP_THROW``, 3.12+) and every coroutine body
    (``INTRINSIC_STOPITERATION_ERROR``, 3.12+) re-raise anything but ``StopIteration``: followed, not
    counted.  The exception table maps each offset to one handler (its innermost), so this follows
    the chain of handlers from ``offset`` to the first that is the user's, or to none.
    """
    entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]
    by_offset = {instr.offset: instr for instr in dis.get_instructions(code)}
    seen: set[int] = set()
    while offset not in seen:
        seen.add(offset)
        entry = next((e for e in entries if e.start <= offset < e.end), None)
        if entry is None:
            return False
        target = by_offset[entry.target]
        glue = target.opname == "CLEANUP_THROW" or (
            target.opname == "CALL_INTRINSIC_1" and target.argrepr == "INTRINSIC_STOPITERATION_ERROR"
        )
        if not glue:
            return True
        offset = entry.target
    return True  # a cycle of handlers: say it runs code


def _learn_drops(chain: Any, frames: Any, learning: list[list[Any]], functions: Any, resolved: Any) -> bool:
    """Record, for each shape in ``learning``, whether dropping a frame of its resume code suspended
    where the primed ``chain`` put it runs code; whether any frame of the chain does."""
    runs_code = False
    for (code, _), (shape, _, _) in zip(resolved, frames, strict=True):
        made = functions[(id(code), shape)]
        if any(made is unknown for unknown in learning):
            made[3] = drop_runs_code(chain.cr_code, chain.cr_frame.f_lasti)
        runs_code = runs_code or bool(made[3])
        chain = chain.cr_await
    return runs_code


def release(coro: Any, runs_code: bool) -> None:
    """Drop a restored chain without running any of its ``finally`` blocks: abandoned when dropping it
    would run code (``set``'s third value), else left to CPython, which then runs none."""
    if runs_code:
        abandon(coro)


def _advanced(fn: Any, args: tuple[Any, ...], value: Any) -> Machine:
    m = Machine(fn, *args)
    m.step()
    for _ in range(CHECKPOINT_AT - 1):
        m.step(value)
    return m


def _check(codec: ShapeCodec, fn: Any, args: tuple[Any, ...], value: Any) -> bytes:
    """The prototype restores exactly: it steps as an uninterrupted machine does, five times."""
    m = _advanced(fn, args, value)
    blob = codec.get(m._coro, check_plain=True)
    coro, payload, runs_code = codec.set(blob)
    reference = _advanced(fn, args, value)
    if payload != reference.pending:
        raise AssertionError(f"restored pending {payload!r} != {reference.pending!r}")
    for _ in range(5):
        got = coro.send(value)[1]
        want = reference.step(value)
        if got != want:
            raise AssertionError(
                f"the prototype's restore stepped to {got!r}, an uninterrupted one to {want!r}"
            )
    release(coro, runs_code)
    again, _, runs_code = codec.set(codec.get(m._coro))
    release(again, runs_code)
    return blob


def check_drops(codec: ShapeCodec) -> str:
    """Dropping a restored chain runs none of its code: ``release`` abandons exactly the chains whose
    drop would reach a handler of theirs (``checkpoint_agents.guarded_root``: an ``except`` around
    the await of the outer of two frames) and leaves the others to CPython (raises if not)."""
    ran = checkpoint_agents.HANDLERS_RAN
    m = _advanced(checkpoint_agents.guarded_root, ("drop",), 1)
    blob = codec.get(m._coro, check_plain=True)
    for _ in range(2):  # the first restore learns the resume code's drop, the second uses it
        coro, _, runs_code = codec.set(blob)
        coro.send(1)
        if not runs_code:
            raise AssertionError("a chain with a handler around its await was found safe to drop")
        release(coro, runs_code)
        del coro
        if ran:
            raise AssertionError(f"dropping a released chain ran its handler: {ran}")
    coro, _, runs_code = codec.set(blob)
    del coro  # not released: CPython's own drop runs the handler, as the check above assumes
    if ran != ["drop"]:
        raise AssertionError(f"an unreleased chain's drop ran {ran}, not the guarded frame's handler")
    ran.clear()
    for key in SCENARIOS:
        _, fn, args, value = checkpoint_agents.SCENARIOS[key]
        machine = _advanced(fn, args, value)  # kept: a machine dropped abandons its chain
        _dropped, _, runs_code = codec.set(codec.get(machine._coro))
        if runs_code:
            raise AssertionError(f"{key}: no handler covers its awaits, yet its drop was said to run code")
    return (
        "  check: a dropped chain runs none of its code; released chains are abandoned only where a "
        "handler covers an await"
    )


def bench(key: str, rounds: int) -> dict[str, Any]:
    import cloudpickle

    desc, fn, args, value = checkpoint_agents.SCENARIOS[key]
    codec = ShapeCodec(KEY)
    blob = _check(codec, fn, args, value)
    m = _advanced(fn, args, value)
    agentrt_blob = m.get()
    Machine.set(agentrt_blob).step(value)  # its plans are made before timing
    chain = []
    current = m._coro
    while type(current) is types.CoroutineType:
        state = capture(current)
        chain.append((state.local_values, state.stack_values[:-1]))
        current = state.stack_values[-1]
    values = tuple(chain)  # the live values, as benchmarks/instructions.py pickles them
    pickled = cloudpickle.dumps(values)

    def proto_set_step() -> None:
        coro, _, runs_code = codec.set(blob)
        coro.send(value)
        release(coro, runs_code)  # as Machine.discard: the dropped chain runs no finally block

    def proto_set_step_abandoned() -> None:
        coro, _, _ = codec.set(blob)
        coro.send(value)
        abandon(coro)  # every chain walked and marked, as agentrt's Machine.discard does

    def agentrt_set_step() -> None:
        Machine.set(agentrt_blob).step(value)

    timings = run_interleaved(
        {
            "prototype_get": lambda: codec.get(m._coro),
            "prototype_set_step": proto_set_step,
            "prototype_set_step_abandoned": proto_set_step_abandoned,
            "agentrt_get": m.get,
            "agentrt_set_step": agentrt_set_step,
            "cloudpickle_dumps": lambda: cloudpickle.dumps(values),
            "cloudpickle_loads": lambda: cloudpickle.loads(pickled),
        },
        rounds=rounds,
        min_round_ns=20_000_000,
        min_rounds=min(3, rounds),
    )
    med = {k: v["median_ns"] for k, v in timings.items()}
    cloud = med["cloudpickle_dumps"] + med["cloudpickle_loads"]
    return {
        "description": desc,
        "prototype_blob_bytes": len(blob),
        "agentrt_blob_bytes": len(agentrt_blob),
        "cloudpickle_bytes": len(pickled),
        "median_ns": {k: round(v, 1) for k, v in med.items()},
        "prototype_ratio": round((med["prototype_get"] + med["prototype_set_step"]) / cloud, 2),
        "agentrt_ratio": round((med["agentrt_get"] + med["agentrt_set_step"]) / cloud, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke: 3 rounds")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 15)
    result: dict[str, Any] = {"python": platform.python_version(), "rounds": rounds, "scenarios": {}}
    print(
        f"benchmarks/checkpoint_floor.py on CPython {platform.python_version()}: get + set + step, "
        f"medians of {rounds} interleaved rounds, per checkpoint"
    )
    print(check_drops(ShapeCodec(KEY)), flush=True)
    for key in SCENARIOS:
        row = result["scenarios"][key] = bench(key, rounds)
        med = row["median_ns"]
        print(f"  {row['description']}")
        for who in ("prototype", "agentrt"):
            print(
                f"    {who:10s} get {med[f'{who}_get'] / 1e3:6.1f} us"
                f"  set+step {med[f'{who}_set_step'] / 1e3:6.1f} us"
                f"  blob {row[f'{who}_blob_bytes']:5d} B  {row[f'{who}_ratio']:5.2f}x cloudpickle"
            )
        print(
            f"    (prototype set+step with every chain abandoned, as agentrt does: "
            f"{med['prototype_set_step_abandoned'] / 1e3:.1f} us)"
        )
        print(
            f"    cloudpickle dumps {med['cloudpickle_dumps'] / 1e3:6.1f} us"
            f"  loads {med['cloudpickle_loads'] / 1e3:6.1f} us  {row['cloudpickle_bytes']:5d} B"
        )
    out = _env.results_dir() / _env.result_name("checkpoint-floor", args.quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
