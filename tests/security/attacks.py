"""The attack classes of issue 10, each a function run in its own subprocess by test_attacks.py.

``python -m tests.security.attacks NAME MARKER_PATH`` builds the hostile blob, hands it
to the API the attack targets, and prints one line: ``REFUSED <error type>: <message>``
or ``ACCEPTED``.  A crash (segfault, abort, C stack overflow) kills the process, so the
test sees a signal instead of the line; a file at MARKER_PATH means code ran.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import sys
from collections.abc import Callable
from typing import Any

from agentrt._codec import _format, dumps, loads
from agentrt._codec._decode import Requirement
from agentrt.exceptions import CorruptBlob, IncompatibleBlob
from agentrt.lowlevel import Machine
from tests.codec.blobtools import split
from tests.security import agents
from tests.security.forge import forge, mutated_frames, stack_of

ATTACKS: dict[str, Callable[[str], Any]] = {}
KEY = b"test key of the attacked project"


def attack(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    ATTACKS[fn.__name__] = fn
    return fn


def machine(fn: Any, *args: Any) -> Machine:
    m = Machine(fn, *args)
    m.step()
    return m


def set_unsigned(blob: bytes) -> Any:
    return Machine.set(blob, allow_unsigned=True)


def dump_unsigned(blob: bytes) -> Any:
    """``agentrt dump --allow-unsigned FILE``, in this process."""
    from agentrt.cli import main

    path = os.environ["ATTACK_TMP"] + "/attack.blob"
    with open(path, "wb") as f:
        f.write(blob)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["dump", path, "--allow-unsigned"])
    text = err.getvalue()
    if code != 0:
        for name in ("CorruptBlob", "IncompatibleBlob"):
            if name in text:
                raise (CorruptBlob if name == "CorruptBlob" else IncompatibleBlob)(text.strip())
        raise RuntimeError(text.strip())
    return out.getvalue()


def both(blob: bytes) -> None:
    """Refused by Machine.set and by agentrt dump (the first that accepts is reported)."""
    try:
        set_unsigned(blob)
    except (CorruptBlob, IncompatibleBlob):
        pass
    else:
        raise AssertionError("Machine.set accepted it")
    dump_unsigned(blob)


def everywhere(blob: bytes) -> None:
    """``agentrt upgrade``'s reader (``frame_records``: ``upgrade --dry-run``, ``check --against``),
    then :func:`both`.  The reader builds no frame, so it may refuse or return; it must not crash,
    stall or blow up first (it once ran unsigned payloads without the decode bounds)."""
    from agentrt._upgrade._blob import frame_records

    with contextlib.suppress(CorruptBlob, IncompatibleBlob):
        frame_records(blob)
    both(blob)


def resign_payload(blob: bytes, payload: bytes) -> bytes:
    head, _ = split(blob)
    return head + _format._digest(head, payload, b"") + payload


# --- code execution -----------------------------------------------------------------------


@attack
def awaited_map_os_system(marker: str) -> None:
    m = machine(agents.plain, marker)

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        state[-1] = map(agents.touch, iter([marker]))  # the awaited slot
        return args, state

    both(forge(m._coro, mutate))


@attack
def awaited_unstarted_coroutine(marker: str) -> None:
    """The awaited slot holds a restored coroutine that never started: priming would run its body."""
    m = machine(agents.plain, marker)

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        if code.co_name == "plain":
            state[-1] = agents.touching(marker)
        return args, state

    blob = forge(m._coro, mutate)
    m.discard()
    both(blob)


@attack
def list_holding_unstarted_await(marker: str) -> None:
    """The same frame inside a list: a value a dump may show, so it must not prime it either."""
    m = machine(agents.plain, marker)

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        if code.co_name == "plain":
            state[-1] = agents.touching(marker)
        return args, state

    with mutated_frames(mutate):
        blob = dumps([m._coro], key=b"")
    m.discard()
    both(blob)


# --- interpreter crashes --------------------------------------------------------------------


def _loop_machine() -> Machine:
    return machine(agents.loop, [1, 2, 3])


def _iterator_position(code: Any, args: list[Any]) -> int:
    from agentrt._frames._stack import describe_slots

    depth = len(args[4])
    roles = describe_slots(code, args[2], depth, args[4], True, [None] * depth)
    return next(r.position for r in roles if r.role == "for_iterator")


@attack
def for_iterator_int(marker: str) -> None:
    m = _loop_machine()

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        start, mask = stack_of(args, state)
        position = _iterator_position(code, args)
        state[start + sum(not n for n in mask[:position])] = 42
        return args, state

    blob = forge(m._coro, mutate)
    restored = set_unsigned(blob)
    restored.step(1)  # the loop's next iteration would crash here
    restored.step(1)


@attack
def for_iterator_stored_trap(marker: str) -> None:
    """A stored suspend() trap is a value for awaited slots only: it has no __next__ for a for loop."""
    from agentrt.lowlevel import _Trap

    m = _loop_machine()

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        start, mask = stack_of(args, state)
        position = _iterator_position(code, args)
        state[start + sum(not n for n in mask[:position])] = _Trap(1)
        return args, state

    restored = set_unsigned(forge(m._coro, mutate))
    restored.step(1)  # FOR_ITER would call a NULL tp_iternext here
    restored.step(1)


@attack
def for_iterator_null(marker: str) -> None:
    m = _loop_machine()

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        start, mask = stack_of(args, state)
        position = _iterator_position(code, args)
        del state[start + sum(not n for n in mask[:position])]
        mask[position] = True
        args[4] = tuple(mask)
        return args, state

    restored = set_unsigned(forge(m._coro, mutate))
    restored.step(1)
    restored.step(1)


@attack
def moved_null_in_call(marker: str) -> None:
    m = machine(agents.half_built_call, marker)

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        _, mask = stack_of(args, state)
        # move the NULL to the other slot of the call: [NULL, f, x] -> [f, NULL, x] (or the reverse)
        pair = next(i for i in range(len(mask) - 1) if mask[i] != mask[i + 1])
        mask[pair], mask[pair + 1] = mask[pair + 1], mask[pair]
        args[4] = tuple(mask)
        return args, state

    restored = set_unsigned(forge(m._coro, mutate))
    restored.step("x")


def _nested(depth: int) -> bytes:
    """A frozenset around a tuple nested ``depth`` deep, written as opcodes (no Python recursion)."""
    return b"\x80\x05(" + b")" + b"\x85" * depth + b"\x91."


@attack
def nested_tuple_frozenset(marker: str) -> None:
    everywhere(resign_payload(dumps([1], key=b""), _nested(200_000)))


@attack
def nested_enumerate(marker: str) -> None:
    # enumerate(enumerate(...enumerate(iter([]), 0)..., 0), 0), a million deep: memo 0 is the reconstructor
    wire = b"\x8c\x14agentrt._codec._wire\x8c\x09enumerate\x93\x94"
    seqiter = b"\x8c\x14agentrt._codec._wire\x8c\x07seqiter\x93\x8c\x04list]N\x87R"
    levels = 1_000_000
    payload = b"\x80\x05" + wire + b"0" + b"h\x00" * levels + seqiter + b"K\x00\x86R" * levels + b"."
    everywhere(resign_payload(dumps([1], key=b""), payload))


@attack
def unicode_error_start(marker: str) -> None:
    blob = dumps(UnicodeDecodeError("utf-8", b"abc", 1, 2, "bad"), key=b"")
    _, payload = split(blob)
    at = payload.index(b"\x8c\x05start\x94K\x01")
    huge = b"\x8a\x06" + (-(2**40)).to_bytes(6, "little", signed=True)
    payload = payload[: at + 8] + huge + payload[at + 10 :]
    exc = loads(resign_payload(blob, payload))
    print(str(exc))  # what the runtime's error_record does: crashed before the fix


@attack
def with_exit_other_method(marker: str) -> None:
    """The ``with`` block's exit slot holds another bound method: leaving the block would call it."""
    m = machine(agents.mixed, marker)

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        start, _ = stack_of(args, state)
        for n in range(start, len(state)):
            value = state[n]
            if getattr(value, "__name__", None) == "__exit__":
                state[n] = value.__self__.__enter__  # bound to the restored object, but not its exit
        return args, state

    blob = forge(m._coro, mutate)
    m.discard()
    both(blob)


# --- resource exhaustion --------------------------------------------------------------------


@attack
def shared_tuple_hash(marker: str) -> None:
    body = b")\x94"
    for i in range(100):
        body += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86\x94"
    everywhere(resign_payload(dumps([1], key=b""), b"\x80\x05(" + body + b"\x91."))


@attack
def colliding_int_keys(marker: str) -> None:
    """20 000 ints that hash alike (n + k * (2**61 - 1)) in one frozenset: 10 s to build, unbounded."""
    modulus = 2**61 - 1
    items = b""
    for k in range(20_000):
        n = k * modulus + 7
        raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
        items += b"\x8a" + bytes([len(raw)]) + raw  # LONG1
    everywhere(resign_payload(dumps([1], key=b""), b"\x80\x05(" + items + b"\x91."))


@attack
def repr_blowup(marker: str) -> None:
    body = b"\x8c\x14agentrt._codec._wire\x8c\x05const\x93" + b"]\x940"
    for i in range(60):
        body += b"](h" + bytes([i]) + b"h" + bytes([i]) + b"e\x940"
    body += b"h" + bytes([60]) + b"\x85R."
    everywhere(resign_payload(dumps([1], key=b""), b"\x80\x05" + body))


@attack
def many_null_masks(marker: str) -> None:
    from agentrt._frames import _diskcache

    machines = [machine(agents.half_built_call, marker) for _ in range(512)]
    counter = iter(range(10**6))

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        n = next(counter)
        mask = [bool(n >> bit & 1) for bit in range(len(args[4]) - 1)] + [False]
        start, old = stack_of(args, state)
        values = iter(state[start:])
        new_values = [next(values, None) if not null else None for null in old]
        state[start:] = [v for v, null in zip(new_values, mask, strict=True) if not null]
        args[4] = tuple(mask)
        return args, state

    blob = forge([m._coro for m in machines], mutate)  # encoding may cache its own analysis
    directory = os.path.join(os.path.dirname(agents.__file__), "__pycache__", "agentrt")
    before = set(os.listdir(directory)) if os.path.isdir(directory) else set()
    try:
        set_unsigned(blob)
    finally:
        after = set(os.listdir(directory)) if os.path.isdir(directory) else set()
        if _diskcache.enabled() and after - before:
            print(f"SIDE EFFECT: {len(after - before)} resume-code files written", file=sys.stderr)


@attack
def deep_json_header(marker: str) -> None:
    blob = dumps([1], key=b"")
    head, payload = split(blob)
    header = b"[" * 100_000 + b"]" * 100_000
    new_head = head[:8] + struct.pack("<I", len(header)) + header
    everywhere(new_head + _format._digest(new_head, payload, b"") + payload)


# --- side effects of a refused load -----------------------------------------------------------


@attack
def list_holding_frame(marker: str) -> None:
    m = machine(agents.with_finally, marker)
    blob = dumps([m._coro], key=b"")
    m.discard()
    dump_unsigned(blob)  # a list is a value a dump may show; its frame's finally must not run
    set_unsigned(blob)  # not a suspended agent: refused, and the frame's finally must not run


@attack
def refused_chain_member(marker: str) -> None:
    """A chain whose inner frame is forged: the outer frame's finally must not run either."""
    m = machine(agents.outer, marker)

    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        if code.co_name == "inner":
            state[-1] = 42
        return args, state

    blob = forge(m._coro, mutate)
    m.discard()
    both(blob)


# --- keyed mode: replay, transplant, kind confusion -----------------------------------------


def _keyed(run: str, seq: int, kind: str = "checkpoint") -> bytes:
    m = machine(agents.plain, "unused")
    blob = m.get_bound(KEY, (kind, run, seq))
    m.discard()
    return blob


def _restore_as(blob: bytes, run: str, seq: int) -> Machine:
    from agentrt.keys import Keyring

    ring = Keyring.of([KEY], "the test key")
    assert ring is not None
    return Machine.set_bound(blob, ring, Requirement(signed=True, kind="checkpoint", run_id=run, seq=seq))


@attack
def replay_other_run(marker: str) -> None:
    _restore_as(_keyed("run-A", 3), "run-A", 3).discard()  # the genuine case is accepted
    _restore_as(_keyed("run-B", 3), "run-A", 3)


@attack
def replay_other_seq(marker: str) -> None:
    _restore_as(_keyed("run-A", 2), "run-A", 3)


@attack
def kind_confusion(marker: str) -> None:
    from agentrt._runtime.encoding import BlobSeal, decode_value, encode_value
    from agentrt.keys import Keyring

    ring = Keyring.of([KEY], "the test key")
    assert ring is not None
    checkpoint = _keyed("run-A", 3)
    try:
        decode_value(checkpoint, BlobSeal(ring, "value#0", "run-A", 3))  # a checkpoint as a tool result
    except CorruptBlob:
        pass
    else:
        raise AssertionError("a checkpoint decoded as a tool result")
    value = encode_value(["result"], BlobSeal(ring, "value#0", "run-A", 3))
    _restore_as(value, "run-A", 3)  # a tool result as a checkpoint


@attack
def unsigned_by_default(marker: str) -> None:
    m = machine(agents.plain, marker)
    blob = dumps(m._coro, key=b"")
    m.discard()
    Machine.set(blob)  # no opt-in


# --- a run's context (format 3, agentrt._context) --------------------------------------------


def _with_context(marker: str, *entries: tuple[str, tuple[str, ...], Any]) -> bytes:
    """An unsigned checkpoint of ``agents.plain`` carrying ``entries`` as its context."""
    from agentrt._context import Carried

    m = machine(agents.plain, marker)
    blob = dumps(Carried(m._coro, entries), key=b"", bind=("checkpoint", None, None))
    m.discard()
    return blob


def shown_then_refused(blob: bytes) -> None:
    """A dump and upgrade's reader show a context as data, resolving nothing (they may accept it;
    they must not crash or run anything); then ``Machine.set`` must refuse it."""
    from agentrt._upgrade._blob import frame_records

    with contextlib.suppress(CorruptBlob, IncompatibleBlob):
        frame_records(blob)
    with contextlib.suppress(CorruptBlob, IncompatibleBlob):
        dump_unsigned(blob)
    set_unsigned(blob)


@attack
def context_names_a_function(marker: str) -> None:
    """A context entry naming a function, not a ContextVar: nothing is called or set."""
    shown_then_refused(_with_context(marker, ("var", ("tests.security.agents:touch",), marker)))


@attack
def context_names_an_unimported_module(marker: str) -> None:
    shown_then_refused(_with_context(marker, ("var", ("antigravity:X",), marker)))


@attack
def context_malformed_entries(marker: str) -> None:
    for entries in (
        (("var", ("no module",), 1),),
        (("shell", (), marker),),
        (("structlog", ("two", "keys"), 1),),
        (("decimal", (), {"prec": -5}),),
    ):
        try:
            set_unsigned(_with_context(marker, *entries))
        except (CorruptBlob, IncompatibleBlob):
            continue
        raise AssertionError(f"Machine.set accepted the context {entries!r}")
    twice = (("var", ("a:B",), 1), ("var", ("a:B",), 2))  # one variable twice
    shown_then_refused(_with_context(marker, *twice))


@attack
def context_opentelemetry_ids_out_of_range(marker: str) -> None:
    import opentelemetry.context  # noqa: F401 - the entry is read only where OpenTelemetry is imported

    shown_then_refused(
        _with_context(marker, ("opentelemetry", (), {"baggage": {}, "trace_id": -1, "span_id": 1}))
    )


@attack
def context_around_something_else(marker: str) -> None:
    """The context extension wrapped around a value that is not a suspended coroutine."""
    from agentrt._context import Carried

    blob = dumps(Carried([marker], (("var", ("a:B",), 1),)), key=b"", bind=("checkpoint", None, None))
    shown_then_refused(blob)


def main() -> int:
    name, marker = sys.argv[1], sys.argv[2]
    try:
        ATTACKS[name](marker)
    except (CorruptBlob, IncompatibleBlob) as exc:
        message = str(exc).replace("\n", " ")
        print(f"REFUSED {type(exc).__name__}: {message[:300]}")
    else:
        print("ACCEPTED")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
