"""A structure-aware decoder fuzzer: mutate decoded frame records, re-sign, restore.

``python -m tests.security.fuzz_decoder SECONDS SEED`` checkpoints the agents of
tests/security/agents.py at several suspensions, then, until the time budget is
spent, forges blobs whose *records* are mutated -- the frame header (kind, code
index, site, bound locals, NULL mask, exception flag, closure cells; now and then the
packed shape bytes of a format-2 record themselves) and the state list (types of
entries, their number, references to other objects of the graph, stack slots) --
and, now and then, single payload bytes.  Half of the blobs are
signed with the project's key (as a key holder who writes nonsense would), half
are unsigned and restored with ``allow_unsigned=True``.  Each is restored with
``Machine.set``; if accepted, it is stepped a few times.  Decoding may only raise
``CorruptBlob`` or ``IncompatibleBlob``; an agent that runs with odd locals may
raise what Python raises; the process must never crash or hang.  Prints one summary
line; exits 1 with the offending seed if decoding raised anything else.
"""

from __future__ import annotations

import os
import random
import sys
import time
import traceback
from typing import Any

from agentrt._codec import _format
from agentrt._codec._decode import Requirement
from agentrt.exceptions import CorruptBlob, IncompatibleBlob
from agentrt.keys import Keyring
from agentrt.lowlevel import Machine
from tests.codec.blobtools import split
from tests.security import agents
from tests.security.forge import encode_record, forge

KEY = b"fuzzer key"
RING = Keyring.of([KEY], "the fuzzer's key")


def _checkpointed() -> list[Machine]:
    out = []
    for fn, args, steps in (
        (agents.loop, ([1, 2, 3],), 2),
        (agents.half_built_call, ("m",), 1),
        (agents.outer, ("/nonexistent/dir/m",), 1),
        (agents.mixed, ("m",), 2),
        (agents.plain, ("m",), 1),
    ):
        m = Machine(fn, *args)
        m.step()
        for _ in range(steps - 1):
            m.step(1)
        out.append(m)
    return out


def _pool(rng: random.Random, machines: list[Machine]) -> Any:
    choices = [
        lambda: rng.randint(-(2**70), 2**70),
        lambda: None,
        lambda: "text",
        lambda: [1, 2],
        lambda: {"k": 1},
        lambda: (1, (2,)),
        lambda: iter([1, 2]),
        lambda: map(len, iter(["ab"])),
        lambda: enumerate(iter([1])),
        lambda: agents.Guard(),
        lambda: agents.Guard().__exit__,
        lambda: len,
        lambda: ValueError("x"),
        lambda: rng.choice(machines)._coro,
        lambda: agents.numbers(2),
    ]
    return rng.choice(choices)()


def _mutate_record(rng: random.Random, machines: list[Machine]) -> Any:
    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        for _ in range(rng.randint(1, 3)):
            what = rng.randrange(10)
            if what == 0:
                args[0] = rng.choice([0, 1, 2, 3, -1, "x", None])
            elif what == 1:
                args[2] = rng.choice([args[2] + 2, args[2] - 2, 0, -1, 10**6, "x"])
            elif what == 2 and args[3]:
                bound = list(args[3])
                del bound[rng.randrange(len(bound))]
                args[3] = tuple(bound)
            elif what == 3:
                args[3] = tuple(sorted(set(args[3]) | {rng.randrange(code.co_nlocals + 2)}))
            elif what == 4 and args[4]:
                mask = list(args[4])
                mask[rng.randrange(len(mask))] ^= True
                args[4] = tuple(mask)
            elif what == 5:
                args[5] = not args[5]
            elif what == 6 and state:
                state[rng.randrange(len(state))] = _pool(rng, machines)
            elif what == 7 and state:
                del state[rng.randrange(len(state))]
            elif what == 8:
                state.insert(rng.randrange(len(state) + 1), _pool(rng, machines))
            elif what == 9 and len(state) > 1:
                i, j = rng.randrange(len(state)), rng.randrange(len(state))
                state[i], state[j] = state[j], state[i]
        if rng.random() < 0.2:
            return _raw_shape(rng, args), state
        return args, state

    return mutate


def _raw_shape(rng: random.Random, args: list[Any]) -> list[Any]:
    """The record as format-2 fields with its shape bytes mangled: a byte flipped, cut or added."""
    record = list(encode_record(args))
    if len(record) != 4:
        return args  # its fields do not fit the shape layout: it stays a format-1 record
    shape = bytearray(record[1])
    what = rng.randrange(3)
    if what == 0 and shape:
        shape[rng.randrange(len(shape))] ^= 1 << rng.randrange(8)
    elif what == 1 and shape:
        del shape[rng.randrange(len(shape)) :]
    else:
        shape.insert(rng.randrange(len(shape) + 1), rng.randrange(256))
    record[1] = bytes(shape)
    return record


def _flip_byte(rng: random.Random, blob: bytes, key: bytes) -> bytes:
    head, payload = split(blob)
    if not payload:
        return blob
    raw = bytearray(payload)
    raw[rng.randrange(len(raw))] = rng.randrange(256)
    return head + _format._digest(head, bytes(raw), key) + bytes(raw)


def _restore(blob: bytes, signed: bool) -> None:
    if signed:
        m = Machine.set_bound(blob, RING, Requirement(signed=True, kind="checkpoint"))
    else:
        m = Machine.set(blob, allow_unsigned=True)
    try:
        for value in (1, 2, 3):
            if m.done:
                break
            m.step(value)
    except MemoryError:
        print("MemoryError while stepping an accepted restore", flush=True)
    except Exception:
        pass  # the agent ran with locals it did not expect: ordinary Python errors
    finally:
        m.discard()


def run(seconds: float, seed: int) -> int:
    machines = _checkpointed()
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    stats = {"accepted": 0, "refused": 0}
    iteration = 0
    trace = bool(os.environ.get("AGENTRT_FUZZ_TRACE"))
    while time.monotonic() < deadline:
        iteration += 1
        signed = rng.random() < 0.5
        key = KEY if signed else b""
        target = rng.choice(machines)
        root: Any = target._coro
        try:
            blob = forge(root, _mutate_record(rng, machines), key=key)
        except Exception:
            continue  # the mutation made something the encoder itself refuses
        if rng.random() < 0.2:
            blob = _flip_byte(rng, blob, key)
        if trace:
            print(f"iteration {iteration} signed={signed} size={len(blob)}", flush=True)
        try:
            _restore(blob, signed)
        except (CorruptBlob, IncompatibleBlob) as exc:
            if trace and "MemoryError" in str(exc):
                print(f"MemoryError while decoding: {exc}", flush=True)
            stats["refused"] += 1
        except BaseException:
            print(f"FAIL seed={seed} iteration={iteration} signed={signed}")
            traceback.print_exc()
            return 1
        else:
            stats["accepted"] += 1
    print(f"OK seed={seed} iterations={iteration} refused={stats['refused']} accepted={stats['accepted']}")
    for m in machines:
        m.discard()
    return 0


if __name__ == "__main__":
    sys.exit(run(float(sys.argv[1]), int(sys.argv[2])))
