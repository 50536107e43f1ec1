"""Blobs of real suspended chains, mutated below a valid digest, never crash the interpreter.

The digest catches accidental corruption, so these tests re-sign every mutation:
the unpickler and the frame reconstructors themselves see the garbage.  Only
CorruptBlob or IncompatibleBlob may come out of ``Machine.set``; stepping a chain
that decoded may raise the agent's own exceptions or agentrt errors, never another
exception out of agentrt's code; never a segfault (which would kill the test
process), and never a hang.
"""

import os
import random
import traceback

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentrt
from agentrt import AgentrtError, CorruptBlob, IncompatibleBlob, Machine
from tests.codec import blobtools
from tests.golden import agents as golden_agents
from tests.lowlevel import agents


def _blobs():
    m = Machine(golden_agents.mixed_state, [1, 2, 3])
    m.step()
    m.step(10)
    yield m.get()
    m = Machine(agents.catches, "t")
    m.step()
    yield m.get()
    m = Machine(agents.counter, 5)
    m.step()
    m.step(1)
    yield m.get()


BLOBS = list(_blobs())
AGENTRT_DIR = os.path.dirname(os.path.abspath(agentrt.__file__)) + os.sep


def raised_by_agentrt(exc: BaseException) -> bool:
    """Whether ``exc`` comes out of agentrt's own code (its innermost frame is in the package),
    rather than out of the agent's code running on odd (mutated but valid) data."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(AGENTRT_DIR)


def test_an_internal_error_is_told_apart_from_the_agents_own():
    with pytest.raises(CorruptBlob) as refused:
        Machine.set(b"x" * 3)
    assert raised_by_agentrt(refused.value)
    with pytest.raises(KeyError) as own:
        {}["missing"]
    assert not raised_by_agentrt(own.value)


def _restore_and_finish(blob: bytes) -> None:
    try:
        m = Machine.set(blob)
    except (CorruptBlob, IncompatibleBlob):
        return
    # A mutation may also produce a valid, different chain; driving it must stay safe.
    for _ in range(10):
        try:
            if m.done or m.step(1) is None:
                return
        except AgentrtError:
            return  # refused, with agentrt's own error
        except Exception as exc:
            # The agent's own exception on odd data is fine (it is the agent's Python); an exception
            # out of agentrt's code that is not an AgentrtError is a bug the fuzzer found.
            assert not raised_by_agentrt(exc), "".join(traceback.format_exception(exc))
            return


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(0, len(BLOBS) - 1),
    position=st.floats(0, 1),
    value=st.integers(0, 255),
    extra=st.integers(0, 3),
)
def test_resigned_payload_mutations_are_safe(which, position, value, extra):
    head, payload = blobtools.split(BLOBS[which])
    index = min(int(position * len(payload)), len(payload) - 1)
    mutated = payload[:index] + bytes([value]) * (1 + extra) + payload[index + 1 :]
    _restore_and_finish(blobtools.sign(head, mutated))


def test_seeded_random_mutation_sweep():
    rng = random.Random(20261129)
    for _ in range(400):
        blob = rng.choice(BLOBS)
        head, payload = blobtools.split(blob)
        data = bytearray(payload)
        for _ in range(rng.randint(1, 4)):
            action = rng.random()
            i = rng.randrange(len(data))
            if action < 0.6:
                data[i] = rng.randrange(256)
            elif action < 0.8:
                del data[i : i + rng.randint(1, 8)]
            else:
                data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        _restore_and_finish(blobtools.sign(head, bytes(data)))


@pytest.mark.parametrize("cut", [0, 1, 5, 12, 40, -1, -7])
def test_truncations(cut):
    for blob in BLOBS:
        with pytest.raises((CorruptBlob, IncompatibleBlob)):
            Machine.set(blob[:cut])
