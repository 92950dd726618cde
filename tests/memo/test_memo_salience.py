"""Salience (06 §4)."""

from __future__ import annotations

import pytest
from memo_fixtures import START

from mbank.memo.model import Node
from mbank.memo.salience import recency, salience


def _node(status: str = "pending", priority: str = "normal", boost: float = 0.0) -> Node:
    node = Node("t_0123456789", "task", "x", "", status, priority, (), None, START, START, START, 1)
    node.boost = boost
    return node


def test_salience_weights_priority_recency_and_degree() -> None:
    value = salience(_node(priority="high"), 2, START, 24.0)
    assert value == pytest.approx(0.45 * 0.75 + 0.35 * 1.0 + 0.20 * 2 / 5)


def test_status_weights_scale_the_sum_and_closed_items_are_zero() -> None:
    base = salience(_node(), 0, START, 24.0)
    assert salience(_node("active"), 0, START, 24.0) == pytest.approx(1.2 * base)
    assert salience(_node("blocked"), 0, START, 24.0) == pytest.approx(0.9 * base)
    assert salience(_node("done", boost=0.5), 9, START, 24.0) == 0.0
    assert salience(_node("dropped", "critical"), 9, START, 24.0) == 0.0


def test_recency_halves_every_half_life_and_is_one_without_one() -> None:
    assert recency(24.0, 24.0) == pytest.approx(0.5)
    assert recency(48.0, 24.0) == pytest.approx(0.25)
    assert recency(1000.0, 0.0) == 1.0
    assert recency(1000.0, -1.0) == 1.0
    older = salience(_node(), 0, START + 24 * 3600, 24.0)
    assert older == pytest.approx(0.45 * 0.5 + 0.35 * 0.5)


def test_degree_term_saturates_at_five_edges() -> None:
    assert salience(_node(), 5, START, 24.0) == salience(_node(), 50, START, 24.0)


def test_maximum_salience_is_one_point_eight() -> None:
    top = salience(_node("active", "critical", boost=0.5), 5, START, 24.0)
    assert top == pytest.approx(1.8)
