"""Hypothesis: random nested values round-trip equal; random aliasing graphs keep their `is` relations."""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codec.helpers import roundtrip

UTC = datetime.UTC


def canonical(value: Any) -> Any:
    """A comparable picture of ``value``: NaN-aware, -0.0-aware, order-free for sets."""
    tp = type(value)
    if tp is float:
        return ("float", "nan" if math.isnan(value) else repr(value))
    if tp is decimal.Decimal:
        return ("decimal", str(value))
    if tp in (list, tuple):
        return (tp.__name__, [canonical(item) for item in value])
    if tp is dict:
        return ("dict", [(canonical(k), canonical(v)) for k, v in value.items()])
    if tp in (set, frozenset):
        return (tp.__name__, sorted(repr(canonical(item)) for item in value))
    if tp is datetime.datetime:
        return ("datetime", repr(value), value.fold)
    return (tp.__name__, value)


hashable_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text()
    | st.binary()
    | st.datetimes(timezones=st.none() | st.just(UTC))
    | st.decimals(allow_nan=False)
)
leaves = hashable_leaves | st.decimals(allow_nan=True) | st.dates() | st.timedeltas()

values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=5)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=5)
        | st.sets(hashable_leaves, max_size=5)
        | st.frozensets(hashable_leaves, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(values)
def test_nested_values_round_trip_equal(value: Any) -> None:
    assert canonical(roundtrip(value)) == canonical(value)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.lists(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n),
            st.lists(st.integers(0, n - 1), max_size=6),
        )
    )
)
def test_aliasing_graphs_keep_identity(graph: tuple[int, list[list[int]], list[int]]) -> None:
    n, edges, roots = graph
    nodes: list[list[Any]] = [[] for _ in range(n)]
    for node, targets in zip(nodes, edges, strict=True):
        node.extend(nodes[t] for t in targets)  # shared sublists, self-containing lists, cycles
    value = {"nodes": nodes, "roots": [nodes[r] for r in roots], "pair": (nodes[0], nodes[-1])}
    restored = roundtrip(value)
    r_nodes = restored["nodes"]
    for i, targets in enumerate(edges):
        assert len(r_nodes[i]) == len(targets)
        for item, t in zip(r_nodes[i], targets, strict=True):
            assert item is r_nodes[t]
    assert all(r is r_nodes[i] for r, i in zip(restored["roots"], roots, strict=True))
    assert restored["pair"][0] is r_nodes[0] and restored["pair"][1] is r_nodes[-1]
    assert len({id(node) for node in r_nodes}) == n
