"""Salience: how much an item deserves attention now (06 §4), a pure function."""

from __future__ import annotations

import math

from mbank.memo.model import PRIORITY_WEIGHT, STATUS_WEIGHT, Node

_LN2 = math.log(2.0)


def recency(age_h: float, half_life_h: float) -> float:
    """`0.5 ** (age_h / half_life_h)`; always 1.0 when the half-life is ≤ 0."""
    if half_life_h <= 0:
        return 1.0
    return math.exp(-_LN2 * age_h / half_life_h)


def salience(node: Node, degree: int, now: float, half_life_h: float) -> float:
    """`STATUS_WEIGHT × (0.45 priority + 0.35 recency + 0.20 min(1, degree/5) + boost)`."""
    weight = STATUS_WEIGHT[node.status]
    if weight == 0.0:
        return 0.0
    age_h = max(0.0, now - node.touched_at) / 3600.0
    return weight * (
        0.45 * PRIORITY_WEIGHT[node.priority]
        + 0.35 * recency(age_h, half_life_h)
        + 0.20 * min(1.0, degree / 5)
        + node.boost
    )
