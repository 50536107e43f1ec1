"""Per-agent concurrency limits of a claim (``claim_runnable(limits=...)``): which candidates a claim
may take when some agents already have runs driven; the store's query finds the candidates."""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["check_limits", "claim_within_limits", "take_within_limits"]


def take_within_limits(
    candidates: list[tuple[str, str]], driven: Mapping[str, int], limits: Mapping[str, int], want: int
) -> tuple[list[str], dict[str, int]]:
    """Which of ``candidates`` (``(run_id, agent)``, best first, none leased) a claim may take, up to
    ``want``, when ``driven`` runs of each limited agent are driven already; and the counts after.
    """
    taken: list[str] = []
    used = dict(driven)
    for run_id, agent in candidates:
        if len(taken) >= want:
            break
        cap = limits.get(agent)
        if cap is not None:
            if used.get(agent, 0) >= cap:
                continue
            used[agent] = used.get(agent, 0) + 1
        taken.append(run_id)
    return taken, used


def claim_within_limits(
    runnable: Callable[[set[str], list[str], int], list[tuple[str, str]]],
    driven: Mapping[str, int],
    limits: Mapping[str, int],
    limit: int,
) -> list[str]:
    """The run ids a claim takes, up to ``limit``, when ``driven`` runs of each limited agent are
    driven already: ``runnable(full, skip, want)`` is the store's query -- up to ``want`` runnable
    ``(run_id, agent)``, best first, of no agent in ``full`` and no run in ``skip``.  The query is
    made again only when a limit passed over some candidates and filled up meanwhile."""
    full = {agent for agent, cap in limits.items() if driven.get(agent, 0) >= cap}
    ids: list[str] = []
    while len(ids) < limit:
        want = limit - len(ids)
        candidates = runnable(full, ids, want)
        taken, driven = take_within_limits(candidates, driven, limits, want)
        ids += taken
        newly_full = {agent for agent, cap in limits.items() if driven.get(agent, 0) >= cap} - full
        if len(candidates) < want or not newly_full:
            break
        full |= newly_full
    return ids


def check_limits(limits: Mapping[str, int] | None) -> dict[str, int]:
    """``limits`` as a plain dict, each value an int >= 1 (the error names the agent)."""
    out: dict[str, int] = {}
    for agent, cap in (limits or {}).items():
        if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
            raise ValueError(f"the concurrency limit of agent {agent!r} must be an int >= 1, got {cap!r}")
        out[agent] = cap
    return out
