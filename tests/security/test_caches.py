"""Resume-code caches are bounded across loads, and a refused blob leaves nothing behind.

Every distinct frame shape a blob names costs a synthesized resume code object (and,
when its load is accepted, a file in ``__pycache__/agentrt``).  One load may name at
most 256 new shapes, but many loads could name many more: the in-memory caches are
least-recently-used with a global bound, a mapping from resume code back to the
agent's code lives only as long as the code object, and a refused load takes its own
shapes out again and writes no file.  Bounds are lowered here so a dozen functions
are enough to cross them.
"""

from __future__ import annotations

import gc
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

import agentrt._frames._plans as frames
from agentrt._codec import dumps
from agentrt._frames import _capture, _diskcache, _resume
from agentrt.exceptions import CorruptBlob
from agentrt.lowlevel import Machine
from tests.security.forge import forge

COUNT = 12
BOUND = 4


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    source = "from agentrt.lowlevel import suspend\n\n" + "".join(
        f"async def f{i}():\n    x{i} = {i}\n    return await suspend(x{i})\n\n" for i in range(COUNT)
    )
    name = f"cache_agents_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("AGENTRT_CODE_CACHE", "1")
    monkeypatch.setattr(_resume, "MAX_RESUME_CODES", BOUND)
    monkeypatch.setattr(frames, "MAX_PLANS", BOUND)
    mod = importlib.import_module(name)
    yield mod
    sys.modules.pop(name, None)


def _ours(module: Any) -> dict[str, Any]:
    """Cache entries for the module's functions: resume codes, plans, back-mappings, views."""
    gc.collect()
    mine = {id(getattr(module, f"f{i}").__code__) for i in range(COUNT)}  # code == compares by value
    return {
        "resume": [r for r in _resume._CACHE.values() if id(r.original) in mine],
        "plans": [p for p in frames.PLANS.values() if id(p.code) in mine],
        "by_code": [e for _, e in _resume._BY_CODE.facts() if id(e[0]) in mine],
        "views": [v for code, v in _capture._VIEWS.facts() if id(v.code) in mine and id(code) not in mine],
    }


def _suspended(module: Any, i: int) -> Machine:
    m = Machine(getattr(module, f"f{i}"))
    assert m.step() == i
    return m


def _files(module: Any, tmp_path: Path, i: int) -> list[Path]:
    directory = tmp_path / "__pycache__" / "agentrt"
    return sorted(directory.glob(f"{module.__name__}.f{i}.resume.*")) if directory.is_dir() else []


def test_accepted_restores_keep_at_most_the_bound(module: Any, tmp_path: Path) -> None:
    for i in range(COUNT):
        m = _suspended(module, i)
        blob = dumps(m._coro, key=b"")
        m.discard()
        restored = Machine.set(blob, allow_unsigned=True)
        assert restored.pending == i
        restored.discard()
    held = _ours(module)
    for cache, entries in held.items():
        assert len(entries) <= BOUND, f"{cache}: {len(entries)} entries, bound {BOUND}"
    if _diskcache.enabled():
        assert _files(module, tmp_path, COUNT - 1), "an accepted restore writes its resume code to disk"


def test_a_live_frame_outlives_its_cache_entry(module: Any) -> None:
    m = _suspended(module, 0)
    blob = dumps(m._coro, key=b"")
    m.discard()
    first = Machine.set(blob, allow_unsigned=True)
    for i in range(1, COUNT):  # push f0's resume code out of the cache
        other = _suspended(module, i)
        again = Machine.set(dumps(other._coro, key=b""), allow_unsigned=True)
        other.discard()
        again.discard()
    assert not [r for r in _resume._CACHE.values() if r.original is module.f0.__code__]
    assert first.get()  # still captured: the back-mapping lives as long as the frame's code
    assert first.step(5).value == 5


def test_refused_blobs_leave_no_shape_in_memory_and_write_no_file(module: Any, tmp_path: Path) -> None:
    def mutate(code: Any, args: list[Any], state: list[Any]) -> Any:
        state[-1] = 42  # the awaited slot: refused before anything runs
        return args, state

    for i in range(COUNT):
        m = _suspended(module, i)
        blob = forge(m._coro, mutate)
        m.discard()
        with pytest.raises(CorruptBlob, match="awaited object"):
            Machine.set(blob, allow_unsigned=True)
        assert not _files(module, tmp_path, i), f"a refused blob wrote resume code of f{i}"
    held = _ours(module)
    assert not held["resume"] and not held["plans"] and not held["by_code"], held
