"""Plot of benchmarks/workers.py results: ``python _plot_workers.py RESULTS.json OUT.png``.

Runs in an interpreter with matplotlib (benchmarks/.venv-peers; never an agentrt dependency).
Left: durable steps/s per system and number of workers.  Right: kill -> run moving again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLORS = {"agentrt-sqlite": "#aec7e8", "agentrt-postgres": "#1f77b4", "dbos-postgres": "#2ca02c"}


def main() -> None:
    results = json.loads(Path(sys.argv[1]).read_text())
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    systems = [s for s in COLORS if any(r["system"] == s for r in results["throughput"])]
    workers = sorted({r["workers"] for r in results["throughput"]})
    width = 0.8 / max(len(systems), 1)
    for i, system in enumerate(systems):
        rows = {r["workers"]: r for r in results["throughput"] if r["system"] == system}
        xs = [k + (i - (len(systems) - 1) / 2) * width for k in range(len(workers))]
        ys = [rows[w]["durable_steps_per_s"] if w in rows else 0 for w in workers]
        bars = left.bar(xs, ys, width, color=COLORS[system], label=system)
        left.bar_label(bars, fmt="%.0f", fontsize=8)
    left.set_xticks(range(len(workers)), [f"{w} worker{'s' if w > 1 else ''}" for w in workers])
    left.set_ylabel("durable steps / s")
    left.set_title(
        f"Throughput ({results['runs']} runs x {results['steps']} steps, {results['cores']} cores)"
    )
    left.legend()
    labels, values, colors = [], [], []
    for r in results["recovery"]:
        labels.append(f"{r['system']}\n{r['how']}")
        took = r["kill_to_moving_s"]
        values.append(took if took is not None else r["gave_up_after_s"])
        colors.append(COLORS.get(r["system"], "#999999") if took is not None else "#d62728")
    bars = right.barh(range(len(values)), values, color=colors)
    right.bar_label(
        bars,
        labels=[f"{v:.2f} s" if r["kill_to_moving_s"] is not None else f"> {v:g} s (never)"
                for v, r in zip(values, results["recovery"], strict=True)],
        fontsize=8,
    )  # fmt: skip
    right.set_yticks(range(len(labels)), labels, fontsize=7)
    right.invert_yaxis()
    right.set_xlabel("seconds from SIGKILL to the run moving again")
    right.set_title("Recovery")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
