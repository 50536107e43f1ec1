"""agentrt._percode: per-code facts held weakly (gone with their code), bounded (oldest out)."""

from __future__ import annotations

import gc

from agentrt._percode import PerCode


def _code(n: int):
    return compile(f"x = {n}", f"<percode {n}>", "exec")


def test_a_fact_is_found_for_its_code_only_and_goes_with_it():
    dropped: list[str] = []
    cache: PerCode[str] = PerCode("t", on_drop=dropped.append)
    code, equal = _code(1), _code(1)
    assert code == equal and code is not equal  # codes compare by value: the cache keys on identity
    assert cache.put(code, "one") == "one" and cache.get(code) == "one" and cache.get(equal) is None
    del code
    gc.collect()
    assert len(cache) == 0 and dropped == ["one"]  # the entry did not keep its code alive


def test_a_full_cache_drops_its_oldest_entry():
    dropped: list[int] = []
    cache: PerCode[int] = PerCode("t", limit=3, on_drop=dropped.append)
    codes = [_code(n) for n in range(5)]
    for n, code in enumerate(codes):
        cache.put(code, n)
    assert len(cache) == 3 and dropped == [0, 1]
    assert [cache.get(c) for c in codes] == [None, None, 2, 3, 4]
    cache.put(codes[4], 40)  # replacing a fact drops the old one, not another entry
    assert dropped == [0, 1, 4] and cache.get(codes[4]) == 40 and len(cache) == 3
    assert sorted(fact for _, fact in cache.facts()) == [2, 3, 40]
