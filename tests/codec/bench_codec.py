"""Codec vs cloudpickle: dumps + loads of small locals and of 1 MB of state.

Run: python -m tests.codec.bench_codec  (not collected by pytest).  Prints the
time per round trip and the ratio agentrt / cloudpickle; the target is <= 2.
"""

from __future__ import annotations

import datetime
import os
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import cloudpickle

from agentrt._codec import dumps, loads
from tests.codec import codec_samples as s


def small_plain() -> dict[str, Any]:
    return {
        "i": 1,
        "big": 2**40,
        "f": 2.5,
        "s": "hello",
        "t": "a longer piece of text for the prompt",
        "b": True,
        "n": None,
        "bytes": b"xyz",
        "lst": [1, 2, 3],
        "tup": (1, "a"),
        "d": {"k": "v", "n": 1},
        "nested": [{"role": "user", "content": "hi"}],
        "neg": -7,
        "zero": 0.0,
        "set": {1, 2},
        "when": datetime.datetime(2024, 5, 1, 12, 0),
        "e": "",
        "flag": False,
        "count": 42,
        "ratio": 0.125,
    }


def small_with_refs() -> dict[str, Any]:
    value = small_plain()
    value.update({"fn": s.top_level, "point": s.Point(1, 2), "cls": s.Point})
    for key in ("e", "flag", "count"):
        del value[key]
    return value


def megabyte() -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "name": f"item-{i}",
            "tags": ["alpha", "beta"],
            "score": i * 1.5,
            "ok": i % 2 == 0,
            "note": "some text " * 3,
        }
        for i in range(20000)
    ]


def measure(fns: list[Callable[[], Any]], rounds: int = 30) -> list[float]:
    """Best CPU time per call of each function, in interleaved rounds (robust to a busy machine)."""
    numbers = [max(1, timeit.Timer(fn).autorange()[0] // 5) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (fn, number) in enumerate(zip(fns, numbers, strict=True)):
            best[i] = min(best[i], timeit.Timer(fn, timer=time.process_time).timeit(number) / number)
    return best


def compare(label: str, value: Any) -> float:
    ours_blob, cloud_blob = dumps(value), cloudpickle.dumps(value)
    ours, cloud = measure([lambda: loads(dumps(value)), lambda: cloudpickle.loads(cloudpickle.dumps(value))])
    ratio = ours / cloud
    print(
        f"{label:<38} agentrt {ours * 1e6:9.1f} µs  cloudpickle {cloud * 1e6:9.1f} µs  ratio {ratio:4.2f}"
        f"   ({len(ours_blob)} / {len(cloud_blob)} bytes)"
    )
    return ratio


def main() -> None:
    print(f"Python {sys.version.split()[0]}")
    cases = [
        ("20 small locals", small_plain()),
        ("20 small locals incl. refs", small_with_refs()),
        ("1 MB list of dicts", megabyte()),
    ]
    compare("warm-up", small_plain())
    for label, value in cases:
        os.environ.pop("AGENTRT_BLOB_KEY", None)
        compare(label + " (unkeyed)", value)
        os.environ["AGENTRT_BLOB_KEY"] = (
            "benchmark-key-926f08afae1f31d412721b54c740579e48331b295778bd07a10b289474186411"
        )
        compare(label + " (keyed)", value)
    os.environ.pop("AGENTRT_BLOB_KEY", None)


if __name__ == "__main__":
    main()
