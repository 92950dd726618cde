"""The events memory is folded from (06 §3.1): msgspec tagged Structs carrying `op` and `at`."""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, frozen=True, tag_field="event"):
    """Base of every event: the op clock value of its call and its time (epoch seconds)."""

    op: int
    at: float


class Remembered(Event, tag="remembered", frozen=True):
    """A node was created."""

    id: str
    kind: str
    title: str
    body: str
    tags: tuple[str, ...]
    priority: str
    status: str
    session: str | None


class Linked(Event, tag="linked", frozen=True):
    """An edge was inserted (or replaced)."""

    src: str
    dst: str
    kind: str
    weight: float
    auto: bool


class Unlinked(Event, tag="unlinked", frozen=True):
    """An edge was removed."""

    src: str
    dst: str
    kind: str


class Updated(Event, tag="updated", frozen=True):
    """Fields of a node changed; `None` means unchanged (tags use add / remove lists)."""

    id: str
    status: str | None = None
    priority: str | None = None
    title: str | None = None
    body: str | None = None
    tags_add: tuple[str, ...] = ()
    tags_remove: tuple[str, ...] = ()
    note: str | None = None
    bump: bool = False


class Forgotten(Event, tag="forgotten", frozen=True):
    """A node and every edge touching it were deleted."""

    id: str
    reason: str  # "explicit" | "cold_after_ops" | "max_nodes_reached"


AnyEvent = Remembered | Linked | Unlinked | Updated | Forgotten
