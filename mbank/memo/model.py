"""The working memory's vocabulary: kinds, statuses, priorities, edge kinds, limits, nodes.

Everything here is spec 06 §2 and §14 written as values. The domain (`mbank.memo.*` minus
`server.py`) imports nothing from `mcp`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from mbank.memo.index import EMPTY_PACKED, Packed

Kind = Literal["task", "blocker", "decision", "question", "insight", "artifact"]
Status = Literal["pending", "active", "blocked", "done", "dropped"]
Priority = Literal["critical", "high", "normal", "low"]
EdgeKind = Literal["blocks", "depends_on", "subtask_of", "relates_to", "supersedes", "touches"]
Order = Literal["salience", "recent", "priority"]

KINDS: Final = ("task", "blocker", "decision", "question", "insight", "artifact")
STATUSES: Final = ("pending", "active", "blocked", "done", "dropped")
OPEN: Final = frozenset({"pending", "active", "blocked"})
CLOSED: Final = frozenset({"done", "dropped"})
PRIORITIES: Final = ("critical", "high", "normal", "low")
PRIORITY_WEIGHT: Final = {"critical": 1.00, "high": 0.75, "normal": 0.50, "low": 0.25}
PRIORITY_RANK: Final = {"critical": 0, "high": 1, "normal": 2, "low": 3}
STATUS_WEIGHT: Final = {
    "pending": 1.00,
    "active": 1.20,
    "blocked": 0.90,
    "done": 0.0,
    "dropped": 0.0,
}
EDGE_KINDS: Final = ("blocks", "depends_on", "subtask_of", "relates_to", "supersedes", "touches")
REVERSE_EDGE_NAME: Final = {
    "blocks": "blocked_by",
    "depends_on": "required_by",
    "subtask_of": "has_subtask",
    "relates_to": "relates_to",
    "supersedes": "superseded_by",
    "touches": "touched_by",
}
ORDERS: Final = ("salience", "recent", "priority")

ID_PATTERN: Final = r"^[tbdqia]_[0-9a-f]{10}$"
ID_RE: Final = re.compile(ID_PATTERN)

# §14 limits.
MAX_TITLE_CHARS: Final = 200
MAX_BODY_BYTES: Final = 8192
MAX_TAGS: Final = 20
MAX_TAG_CHARS: Final = 40
MAX_SESSION_CHARS: Final = 100
MAX_NOTE_CHARS: Final = 500
MAX_RELATED_TO: Final = 50
MAX_KEY_CHARS: Final = 200
MAX_QUERY_CHARS: Final = 2000
SEARCHABLE_BODY_CHARS: Final = 500
HISTORY_MAXLEN: Final = 50
HISTORY_SHOWN: Final = 10
DEFAULT_MAX_NODES: Final = 5000
EVICTION_SAMPLE: Final = 64
DEFAULT_IDEM_MAX_ENTRIES: Final = 2000
IDEMPOTENCY_TTL_S: Final = 86_400.0
DEFAULT_COLD_AFTER_OPS: Final = 500
DEFAULT_FORGET_SWEEP_BATCH: Final = 10
DEFAULT_AUTOLINK_MAX: Final = 4
DEFAULT_AUTOLINK_THRESHOLD: Final = 0.15
DEFAULT_HALF_LIFE_H: Final = 24.0
# Postings a query may walk (issue 19: constants, so the cost per call is flat in N), and how
# many of the best partial scores are then rescored exactly: autolinking inside do_remember,
# and read_related's seeds (SEED_MAX of them at most).
AUTOLINK_BUDGET: Final = 512
AUTOLINK_RESCORED: Final = 32
SEED_BUDGET: Final = 4096
SEED_RESCORED: Final = 128
SEED_MAX: Final = 200
EXPAND_DECAY: Final = 0.5
EXPAND_FLOOR: Final = 0.01
EXPAND_LIMIT: Final = 200
NEIGHBORHOOD_TOP: Final = 25
PENDING_BLOCKED_BY_SHOWN: Final = 5
HOTTEST: Final = 5
LOG_CHECKPOINT_EVENTS: Final = 20_000
SPILL_MAX_ITEMS: Final = 500
SPILL_BODY_CHARS: Final = 1000
BOOST_STEP: Final = 0.1
BOOST_MAX: Final = 0.5

KIND_PREFIX: Final = {kind: kind[0] for kind in KINDS}


class MemoError(Exception):
    """A refusal with a spec-named code (06 §15); the surface renders `<code>: <message>`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def volatile_not_found(ids: list[str]) -> MemoError:
    """`node_not_found` naming the ids, reminding that the memory is volatile."""
    if len(ids) == 1:
        what = f"no item {ids[0]} in working memory"
    else:
        what = "no items " + ", ".join(ids) + " in working memory"
    return MemoError(
        "node_not_found",
        f"{what}; the memory is volatile, so a restart empties it "
        "(read_pending lists what exists).",
    )


class Edge(msgspec.Struct, frozen=True):
    """A directed edge; identity is `(src, dst, kind)` (06 §2.3)."""

    src: str
    dst: str
    kind: str
    weight: float = 1.0
    auto: bool = False

    def label(self) -> str:
        """The `src -kind-> dst` form used by history entries and results."""
        return f"{self.src} -{self.kind}-> {self.dst}"


class HistoryEntry(msgspec.Struct, frozen=True, omit_defaults=True):
    """One entry of a node's history (06 §3.4); `at` is epoch seconds, rendered ISO Z."""

    at: float
    op: int
    what: str
    changes: dict[str, tuple[object, object]] | None = None
    note: str | None = None
    edge: str | None = None


@dataclasses.dataclass(slots=True, eq=False)
class Node:
    """A live node (06 §2.4). Mutable on purpose: only the reducer's `apply` writes to it.

    A node is made when it is remembered: `created_at`, `updated_at` and `touched_at` all
    start at that moment, `touched_at_op` at that op.
    """

    id: str
    kind: str
    title: str
    body: str
    status: str
    priority: str
    tags: tuple[str, ...]
    session: str | None
    created_at: float
    updated_at: float
    touched_at: float
    touched_at_op: int
    boost: float = 0.0
    vector: Packed = EMPTY_PACKED
    history: deque[HistoryEntry] = dataclasses.field(
        default_factory=lambda: deque(maxlen=HISTORY_MAXLEN)
    )
    history_total: int = 0

    def copy(self) -> Node:
        """An independent copy (the vector dict is shared: it is never mutated in place)."""
        twin = Node.__new__(Node)
        for name in NODE_FIELDS:
            setattr(twin, name, getattr(self, name))
        twin.history = deque(self.history, maxlen=HISTORY_MAXLEN)
        return twin

    def canonical(self) -> tuple[object, ...]:
        """Every field as plain values, for equality checks between two states."""
        return tuple(
            list(self.history) if name == "history" else getattr(self, name) for name in NODE_FIELDS
        )


# The field names, once: `dataclasses.fields` per call would double the cost of a copy.
NODE_FIELDS: Final = tuple(field.name for field in dataclasses.fields(Node))


def normalise_tags(tags: Sequence[str] | None) -> tuple[str, ...]:
    """Stripped, case-folded, de-duplicated, sorted; blanks dropped (06 §2.4)."""
    if not tags:
        return ()
    return tuple(sorted({t.strip().casefold() for t in tags if t.strip()}))


class MemoConfig(msgspec.Struct, frozen=True):
    """The server's options (06 §1); the autolink threshold is resolved against the embedder."""

    half_life_h: float = DEFAULT_HALF_LIFE_H
    max_nodes: int = DEFAULT_MAX_NODES
    cold_after_ops: int = DEFAULT_COLD_AFTER_OPS
    forget_batch: int = DEFAULT_FORGET_SWEEP_BATCH
    autolink_max: int = DEFAULT_AUTOLINK_MAX
    autolink_threshold: float | None = None
    idem_max: int = DEFAULT_IDEM_MAX_ENTRIES
    checkpoint_events: int = LOG_CHECKPOINT_EVENTS
