"""Committed blobs from earlier builds keep restoring; one made from other code must not."""

import json
import sys
from pathlib import Path

import pytest

from agentrt import IncompatibleBlob, Machine
from tests.golden import agents

VERSION_DIR = Path(__file__).parent / f"{sys.version_info[0]}.{sys.version_info[1]}"
pytestmark = pytest.mark.skipif(not VERSION_DIR.exists(), reason="no golden blobs for this Python")


def test_golden_blob_restores_with_its_pending_request():
    expected = json.loads((VERSION_DIR / "expected.json").read_text())["mixed_state"]
    m = Machine.set(
        (VERSION_DIR / "mixed_state.blob").read_bytes(), allow_unsigned=True
    )  # a committed, unsigned artifact
    assert list(m.pending) == expected["pending"]


def test_golden_blob_result_is_exact():
    m = Machine.set(
        (VERSION_DIR / "mixed_state.blob").read_bytes(), allow_unsigned=True
    )  # a committed, unsigned artifact
    assert m.step(20) == ("helper", 3)
    done = m.step(30)
    total, note, aliased, shared = done.value
    assert total == 10 * 2 + 20 * 2 + 30 * 2
    assert note == agents.Note("start", ["a"])
    assert aliased is True
    assert shared == [1, 2, 0, 1, 2]


def test_blob_of_changed_code_is_incompatible_and_names_the_function():
    blob = (VERSION_DIR / "incompatible_changed_code.blob").read_bytes()
    with pytest.raises(IncompatibleBlob) as info:
        Machine.set(blob, allow_unsigned=True)
    message = str(info.value)
    assert "changed_since_checkpoint" in message
    assert "changed" in message


def test_blob_of_another_python_minor_is_incompatible():
    others = [
        d for d in Path(__file__).parent.iterdir() if d.is_dir() and d.name[0].isdigit() and d != VERSION_DIR
    ]
    if not others:
        pytest.skip("golden blobs of only one Python version are committed")
    blob = (others[0] / "mixed_state.blob").read_bytes()
    with pytest.raises(IncompatibleBlob, match="Python"):
        Machine.set(blob, allow_unsigned=True)


def test_the_committed_blobs_are_format_1_and_still_read() -> None:
    """They were written before format 2 (compact frame records): reading them is the proof that a
    format-1 blob still restores (the tests above); a format-2 blob of the same agent does too."""
    from agentrt._codec import read_header
    from agentrt._codec._format import FORMAT_VERSION

    blob = (VERSION_DIR / "mixed_state.blob").read_bytes()
    assert read_header(blob).format_version == 1 < FORMAT_VERSION
    m = Machine.set(blob, allow_unsigned=True)  # a committed, unsigned artifact
    again = Machine.set(m.get_bound(b"", ("checkpoint", None, None)), allow_unsigned=True)
    assert read_header(again.get_bound(b"", ("checkpoint", None, None))).format_version == FORMAT_VERSION
    assert list(again.pending) == list(m.pending)
    assert again.step(20) == m.step(20) == ("helper", 3)
    assert again.step(30) == m.step(30)
