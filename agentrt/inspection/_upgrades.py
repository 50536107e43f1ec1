"""A run's upgrade history, and a checkpoint before and after ``agentrt upgrade`` moved it.

``agentrt upgrade`` records each move in the run's history as an ``upgrade`` event (which
frames moved, their old and new digest and site, which locals were carried over, supplied
by a migration or dropped; or, for a restart, the safe point and what was withdrawn) and
keeps the checkpoint blob it replaced.  :func:`upgrade_history` reads that history (what
``agentrt dump RUN`` lists); :func:`upgrade_diff` compares checkpoint N as it was before
its upgrade with N as it is (``agentrt diff RUN N N``).

The blob before names code that is usually gone, so it is read from its frame records
(the dry read of :mod:`agentrt._upgrade._blob`: function, digest, site and the names of
its locals, nothing built); its values are shown only when its code is importable here.
The blob after is dumped as usual.
"""

from __future__ import annotations

import datetime
from typing import Any  # Any: JSON documents

import attrs

from agentrt._frames import ParsedFrameRecord as FrameRecord
from agentrt._upgrade import frame_records
from agentrt.exceptions import CheckpointNotFound
from agentrt.inspection._model import Dump, FrameView, UpgradeFrame, UpgradeView
from agentrt.inspection._render import upgrade_json
from agentrt.keys import keyring_for_store
from agentrt.stores.base import Store

__all__ = ["UpgradeDiff", "render_upgrade_diff", "upgrade_diff", "upgrade_diff_to_json", "upgrade_history"]

UPGRADE_EVENT = "upgrade"


def upgrade_history(store: Store, run_id: str) -> tuple[UpgradeView, ...]:
    """Every ``agentrt upgrade`` of ``run_id``, oldest first."""
    kept = {(r.seq, r.n) for r in store.replaced_checkpoints(run_id)}
    out = []
    for event in store.list_events(run_id):
        if event.kind != UPGRADE_EVENT or not isinstance(event.data, dict):
            continue
        data = event.data
        frames = tuple(_moved(m) for m in data.get("moves", ()) if isinstance(m, dict))
        if not frames:  # an event of an agentrt that recorded only verdicts
            frames = tuple(
                UpgradeFrame(
                    f.get("function", "?"),
                    f.get("digest", ""),
                    f.get("new_digest", ""),
                    f.get("site", ""),
                    "",
                )
                for f in data.get("frames", ())
                if isinstance(f, dict)
            )
        restart = data.get("restart") if isinstance(data.get("restart"), dict) else None
        out.append(
            UpgradeView(
                event.seq,
                event.n,
                event.created_at,
                str(data.get("how", "moved")),
                frames,
                (event.seq, event.n) in kept,
                restart,
            )
        )
    return tuple(out)


def _moved(m: dict[str, Any]) -> UpgradeFrame:
    raw = m.get("locals")
    locals_: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return UpgradeFrame(
        str(m.get("function", "?")),
        str(m.get("old_digest", "")),
        str(m.get("new_digest", "")),
        str(m.get("old_site", "")),
        str(m.get("new_site", "")),
        tuple(locals_.get("mapped", ())),
        tuple(locals_.get("supplied", ())),
        tuple(locals_.get("dropped", ())),
    )


# --------------------------------------------------------------------------- before and after


@attrs.frozen
class FrameSide:
    """One frame of one side, as its record says (and its values, when that side could be dumped)."""

    function: str
    digest: str
    site: str
    locals: tuple[str, ...]
    values: dict[str, str] = attrs.field(factory=dict)  # name -> short repr


@attrs.frozen
class FramePair:
    index: int
    before: FrameSide | None
    after: FrameSide | None
    moved: UpgradeFrame | None  # what the upgrade record says of it


@attrs.frozen
class UpgradeDiff:
    run_id: str
    seq: int
    upgrades: tuple[UpgradeView, ...]  # the upgrades of checkpoint seq, oldest first
    frames: tuple[FramePair, ...]
    before_values: bool  # the values before could be shown (the old code is importable here)


def upgrade_diff(store: Store, run_id: str, seq: int, before: Dump | None, after: Dump) -> UpgradeDiff:
    """Checkpoint ``seq`` before its (first) upgrade and now.  ``after`` is its dump; ``before`` the dump
    of the kept blob, or None when that cannot be decoded here.  ``CheckpointNotFound`` when no upgrade
    replaced checkpoint ``seq``."""
    kept = [r for r in store.replaced_checkpoints(run_id) if r.seq == seq]
    current = store.get_checkpoint(run_id, seq)
    if not kept or current is None:
        raise CheckpointNotFound(
            f"checkpoint {seq} of run {run_id!r} was not replaced by an upgrade, so there is no other "
            f"version of it to compare with; compare two checkpoints (agentrt diff {run_id} A B), or see "
            f"the run's upgrades in `agentrt dump {run_id}`"
        )
    ring = keyring_for_store(store)
    sides_before = _sides(kept[0].blob, ring.read, before)
    sides_after = _sides(current, ring.read, after)
    upgrades = tuple(u for u in upgrade_history(store, run_id) if u.seq == seq and u.how == "moved")
    moves = [m for u in upgrades for m in u.frames]
    pairs = []
    for n in range(max(len(sides_before), len(sides_after))):
        b = sides_before[n] if n < len(sides_before) else None
        a = sides_after[n] if n < len(sides_after) else None
        moved = next(
            (m for m in moves if b is not None and m.function == b.function and m.old_site == b.site), None
        )
        pairs.append(FramePair(n, b, a, moved))
    has_before_values = before is not None and before.frames is not None
    return UpgradeDiff(run_id, seq, upgrades, tuple(pairs), has_before_values)


def _sides(blob: bytes, keys: Any, dump: Dump | None) -> list[FrameSide]:
    identities, raw = frame_records(blob, keys)
    views = list(dump.frames or ()) if dump is not None else []
    out = []
    for args in raw:
        record = FrameRecord.parse(args)
        if record is None or not 0 <= record.code_index < len(identities) or record.info is None:
            continue
        identity = identities[record.code_index]
        site = record.info.site.label() if record.info.site is not None else "not started"
        side = FrameSide(
            f"{identity.module}:{identity.qualname}", identity.digest, site, record.bound_names()
        )
        view = _view_of(views, identity.module, identity.qualname)
        if view is not None:
            views.remove(view)
            side = attrs.evolve(
                side,
                values={v.name: "<empty cell>" if v.value is None else v.value.repr for v in view.locals},
            )
        out.append(side)
    return out


def _view_of(views: list[FrameView], module: str, qualname: str) -> FrameView | None:
    return next((v for v in views if v.module == module and v.qualname == qualname), None)


def _short(digest: str) -> str:
    return digest[:8] if digest else "?"


def render_upgrade_diff(diff: UpgradeDiff) -> str:
    out = [f"agentrt diff of run {diff.run_id}: checkpoint {diff.seq} before its upgrade → after it"]
    for u in diff.upgrades:
        when = datetime.datetime.fromtimestamp(u.at).strftime("%Y-%m-%d %H:%M:%S")
        out.append(f"  agentrt upgrade at {when} moved {len(u.frames)} frame(s) (event {u.n} at seq {u.seq})")
    if not diff.before_values:
        out.append(
            "  (values before: not shown, the old code is not importable here; its sites and names are)"
        )
    for pair in diff.frames:
        out.append("")
        out.extend(_pair_lines(pair))
    return "\n".join(out) + "\n"


def _pair_lines(pair: FramePair) -> list[str]:
    b, a = pair.before, pair.after
    if a is None:
        assert b is not None
        return [f"frame {pair.index} {b.function}: only before the upgrade"]
    if b is None:
        return [f"frame {pair.index} {a.function}: only after the upgrade (at {a.site})"]
    same = b.digest == a.digest
    lines = [
        f"frame {pair.index} {a.function}: "
        + ("code unchanged" if same else f"moved to the new code {_short(b.digest)} → {_short(a.digest)}")
    ]
    lines.append(f"  site: {b.site}" + (" (same)" if b.site == a.site else f" → {a.site}"))
    supplied = set(pair.moved.supplied) if pair.moved is not None else set()
    if same:
        return lines
    lines.append("  locals:")
    for name in a.locals:
        value = a.values.get(name, "?")
        if name in supplied:
            lines.append(f"    + {name} = {value}  (supplied by the migration)")
        elif name in b.locals:
            was = b.values.get(name)
            carried = "carried over" if was is None or was == value else f"carried over, was {was}"
            lines.append(f"    = {name} = {value}  ({carried})")
        else:
            lines.append(f"    + {name} = {value}")
    for name in b.locals:
        if name not in a.locals:
            was = f", was {b.values[name]}" if name in b.values else ""
            lines.append(f"    - {name}  (dropped: the new code does not keep it{was})")
    return lines


def upgrade_diff_to_json(diff: UpgradeDiff) -> dict[str, Any]:
    def side(s: FrameSide | None) -> dict[str, Any] | None:
        if s is None:
            return None
        return {
            "function": s.function,
            "digest": s.digest,
            "site": s.site,
            "locals": list(s.locals),
            "values": s.values,
        }

    frames = []
    for pair in diff.frames:
        b, a = pair.before, pair.after
        supplied = set(pair.moved.supplied) if pair.moved is not None else set()
        entry: dict[str, Any] = {"index": pair.index, "before": side(b), "after": side(a)}
        if a is not None and b is not None:
            entry["locals"] = {
                "mapped": [n for n in a.locals if n in b.locals and n not in supplied],
                "supplied": [n for n in a.locals if n in supplied],
                "added": [n for n in a.locals if n not in b.locals and n not in supplied],
                "dropped": [n for n in b.locals if n not in a.locals],
            }
        frames.append(entry)
    return {
        "run_id": diff.run_id,
        "before_seq": diff.seq,
        "after_seq": diff.seq,
        "upgrade": True,
        "upgrades": [upgrade_json(u) for u in diff.upgrades],
        "before_values": diff.before_values,
        "frames": frames,
    }
