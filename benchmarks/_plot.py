"""Bar plots of benchmarks/checkpoint.py results: ``python _plot.py RESULTS.json OUT.png``.

Runs in whichever interpreter has matplotlib (benchmarks/.venv-plot, made on demand by
checkpoint.py; never an agentrt dependency).  Reads only the JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

AGENTRT = ("#1f77b4", "#aec7e8")
CLOUDPICKLE = ("#ff7f0e", "#ffbb78")
DISPATCH = ("#2ca02c", "#98df8a")


def _size(n: int) -> str:
    return f"{n:,} B" if n < 10_000 else f"{n / 1e3:,.0f} kB"


def _wrap(text: str) -> str:
    """'(a) 1 frame, 20 locals' -> '(a)\n1 frame, 20 locals'."""
    head, _, tail = text.partition(" ")
    return f"{head}\n{tail}" if head.startswith("(") else text


def _stacked(ax: Any, x: float, parts: list[tuple[float, str, str]], width: float = 0.6) -> float:
    bottom = 0.0
    for value, color, label in parts:
        ax.bar(x, value, width, bottom=bottom, color=color, label=label, edgecolor="white", linewidth=0.5)
        bottom += value
    return bottom


def plot_one(result: dict[str, Any], out: Path) -> None:
    scenarios = {k: s for k, s in result["scenarios"].items() if "error" not in s}
    fig, axes = plt.subplots(2, 3, figsize=(15, 9))
    py = result["python"]["version"]
    fig.suptitle(
        f"agentrt checkpoint benchmark, CPython {py} ({result['mode']} mode): "
        "per suspension, median of rounds",
        fontsize=13,
    )
    dispatch = result.get("dispatch", {})
    for ax, (key, sc) in zip(axes[0], scenarios.items(), strict=False):
        m = sc["measurements"]
        big = m["set_step"]["median_ns"] + m["get"]["median_ns"] > 1e7  # plot in ms
        unit, div = ("ms", 1e6) if big else ("µs", 1e3)

        def _us(ns: float, div: float = div) -> float:
            return ns / div

        labels = ["agentrt\nget + set+step", "cloudpickle\ndumps + loads"]
        total_a = _stacked(
            ax,
            0,
            [
                (_us(m["get"]["median_ns"]), AGENTRT[0], "agentrt get()"),
                (_us(m["set_step"]["median_ns"]), AGENTRT[1], "agentrt set() + step()"),
            ],
        )
        total_c = _stacked(
            ax,
            1,
            [
                (_us(m["cloudpickle_dumps"]["median_ns"]), CLOUDPICKLE[0], "cloudpickle dumps"),
                (_us(m["cloudpickle_loads"]["median_ns"]), CLOUDPICKLE[1], "cloudpickle loads"),
            ],
        )
        totals = [total_a, total_c]
        if key == "a_flat20" and "measurements" in dispatch:
            dm = dispatch["measurements"]
            totals.append(
                _stacked(
                    ax,
                    2,
                    [
                        (_us(dm["dumps"]["median_ns"]), DISPATCH[0], "dispatch-py pickle.dumps"),
                        (_us(dm["loads_step"]["median_ns"]), DISPATCH[1], "dispatch-py pickle.loads + step"),
                    ],
                )
            )
            labels.append(f"dispatch-py {dispatch.get('dispatch_py', '')}\ndumps + loads+step")
        for i, total in enumerate(totals):
            ax.text(
                i,
                total,
                f"{total:,.1f} {unit}",
                ha="center",
                va="bottom",
            )
        ax.set_xticks(range(len(labels)), labels, fontsize=9)
        ax.set_ylabel(f"{unit} per suspension")
        ax.set_ylim(0, max(totals) * 1.18)
        ax.set_title(
            f"{sc['description']}\nratio {sc['ratio']:.2f}× (target ≤ 2×); blob {_size(sc['blob_bytes'])}, "
            f"pickle {_size(sc['cloudpickle_bytes'])}",
            fontsize=10,
        )
        ax.legend(fontsize=8, loc="upper right")
    for ax in axes[0][len(scenarios) :]:
        ax.axis("off")

    # cycles
    ax = axes[1][0]
    cycles = {k: c for k, c in result["cycles"].items() if "error" not in c}
    width = 0.38
    for i, cy in enumerate(cycles.values()):
        m = cy["measurements"]
        ax.bar(
            i - width / 2,
            m["machine_step"]["median_ns"],
            width,
            color=AGENTRT[0],
            label="Machine.step" if i == 0 else None,
        )
        ax.bar(
            i + width / 2,
            m["coro_send"]["median_ns"],
            width,
            color="#7f7f7f",
            label="coro.send by hand" if i == 0 else None,
        )
        ax.text(
            i,
            max(m["machine_step"]["median_ns"], m["coro_send"]["median_ns"]),
            f"{cy['ratio']:.2f}×",
            ha="center",
            va="bottom",
        )
    ax.set_xticks(
        range(len(cycles)),
        [_wrap(result["scenarios"].get(k, {}).get("description", k)) for k in cycles],
        fontsize=8,
    )
    ax.set_ylabel("ns per suspend/step cycle")
    ax.set_title("suspend/step cycles without checkpoints (target ≤ 1.2×)", fontsize=10)
    ax.legend(fontsize=8)
    ax.margins(y=0.15)

    # sizes
    ax = axes[1][1]
    keys = list(scenarios)
    width = 0.27
    ax.bar(
        [i - width for i in range(len(keys))],
        [scenarios[k]["blob_bytes"] for k in keys],
        width,
        color=AGENTRT[0],
        label="agentrt blob",
    )
    ax.bar(
        list(range(len(keys))),
        [scenarios[k]["cloudpickle_bytes"] for k in keys],
        width,
        color=CLOUDPICKLE[0],
        label="cloudpickle of locals",
    )
    if "blob_bytes" in dispatch and "a_flat20" in keys:
        i = keys.index("a_flat20")
        ax.bar(i + width, dispatch["blob_bytes"], width, color=DISPATCH[0], label="dispatch-py pickle")
    ax.set_yscale("log")
    ax.set_xticks(range(len(keys)), [_wrap(scenarios[k]["description"]) for k in keys], fontsize=8)
    ax.set_ylabel("bytes (log scale)")
    ax.set_title("checkpoint size", fontsize=10)
    ax.legend(fontsize=8)

    # ratios vs targets
    ax = axes[1][2]
    targets = [t for t in result["targets"].values() if t["value"] is not None]
    for i, t in enumerate(targets):
        ax.bar(i, t["value"], 0.6, color="#2ca02c" if t["met"] else "#d62728")
        ax.hlines(t["target"], i - 0.4, i + 0.4, colors="black", linestyles="dashed")
        ax.text(i, t["value"], f"{t['value']:.2f}×", ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(targets)), [t["name"].replace("_", "\n", 1) for t in targets], fontsize=7)
    values = [t["value"] for t in targets] + [t["target"] for t in targets]
    if values and max(values) / max(min(values), 1e-9) > 8:
        ax.set_yscale("log")
        ax.set_ylabel("ratio, log scale (dashed line: target)")
    else:
        ax.set_ylabel("ratio (dashed line: target)")
        ax.margins(y=0.15)
    ax.set_title("ratios vs targets (green: met, red: missed)", fontsize=10)

    fig.tight_layout()
    fig.savefig(out, dpi=110, format="png")


def plot_merged(merged: dict[str, Any], out: Path) -> None:
    runs = {v: r for v, r in merged["runs"].items() if "skipped" not in r}
    names: list[str] = []
    for r in runs.values():
        for name, t in r["targets"].items():
            if t["value"] is not None and name not in names:
                names.append(name)
    fig, ax = plt.subplots(figsize=(13, 5.5))
    width = 0.8 / max(1, len(runs))
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"]
    for j, r in enumerate(runs.values()):
        xs, ys = [], []
        for i, name in enumerate(names):
            t = r["targets"].get(name)
            if t and t["value"] is not None:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(t["value"])
        bars = ax.bar(xs, ys, width, color=colors[j % len(colors)], label=f"CPython {r['python']['version']}")
        for bar, y in zip(bars, ys, strict=True):
            ax.text(bar.get_x() + bar.get_width() / 2, y, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    for i, name in enumerate(names):
        limit = next(r["targets"][name]["target"] for r in runs.values() if name in r["targets"])
        ax.hlines(limit, i - 0.45, i + 0.45, colors="black", linestyles="dashed")
    ax.set_xticks(range(len(names)), [n.replace("_", "\n", 1) for n in names], fontsize=8)
    values = [t["value"] for r in runs.values() for t in r["targets"].values() if t["value"] is not None]
    if values and max(values) / max(min(values), 1e-9) > 8:
        ax.set_yscale("log")
        ax.set_ylabel("ratio, log scale (dashed line: target)")
    else:
        ax.set_ylabel("ratio (dashed line: target)")
        ax.margins(y=0.15)
    ax.set_title(f"agentrt checkpoint benchmark: ratios vs targets per interpreter ({merged['mode']} mode)")
    ax.legend(fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110, format="png")


def main() -> None:
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    data = json.loads(src.read_text())
    tmp = out.with_name(out.name + ".tmp")
    if "runs" in data:
        plot_merged(data, tmp)
    else:
        plot_one(data, tmp)
    tmp.replace(out)


if __name__ == "__main__":
    main()
