"""The store: state, event log and idempotency table behind one lock (06 §3.3)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from mbank.memo.embedder import Embedder, HashingEmbedder
from mbank.memo.events import AnyEvent
from mbank.memo.idempotency import IdempotencyTable
from mbank.memo.model import KIND_PREFIX, MemoConfig
from mbank.memo.reducer import MemoState, apply, fold

T = TypeVar("T")

Clock = Callable[[], float]
IdFactory = Callable[[str], str]
Finish = Callable[[], dict[str, Any]]
# A handler sees the state, the call's time and an id minter; it returns the call's events
# (from `decide`) and a function that builds the response once they are applied.
Handler = Callable[[MemoState, float, Callable[[str], str]], tuple[list[AnyEvent], Finish]]


def uuid_ids(kind: str) -> str:
    """`<kind letter>_<10 hex digits from a uuid4>` (06 §2.1)."""
    return f"{KIND_PREFIX[kind]}_{uuid.uuid4().hex[:10]}"


class MemoStore:
    """One session's working memory. Every tool call goes through `mutate` or `read`."""

    def __init__(
        self,
        config: MemoConfig | None = None,
        embedder: Embedder | None = None,
        clock: Clock = time.time,
        new_id: IdFactory = uuid_ids,
    ) -> None:
        self.config = config or MemoConfig()
        self.embedder: Embedder = embedder or HashingEmbedder()
        self.clock = clock
        self._new_id = new_id
        self.lock = threading.Lock()
        self.state = MemoState(self.embedder)
        self.checkpoint = MemoState(self.embedder)
        self.log: list[AnyEvent] = []
        self.idempotency = IdempotencyTable(self.config.idem_max)
        self.started_at = clock()

    def mint(self, kind: str) -> str:
        """A fresh id for `kind`, never one already live."""
        while True:
            node_id = self._new_id(kind)
            if node_id not in self.state.nodes:
                return node_id

    def mutate(self, tool: str, key: str, arguments: dict[str, Any], handler: Handler) -> Any:
        """Lock → idempotency check → decide → apply → log → record → unlock."""
        with self.lock:
            now = self.clock()
            replay = self.idempotency.lookup(tool, key, arguments, now)
            if replay is not None:
                return replay
            events, finish = handler(self.state, now, self.mint)
            for event in events:
                apply(self.state, event)
            self.log.extend(events)
            if len(self.log) > self.config.checkpoint_events:
                self.checkpoint = self.state.clone()
                self.log = []
            payload = finish()
            self.idempotency.record(tool, key, arguments, now, payload)
            return payload

    def read(self, reader: Callable[[MemoState, float], T]) -> T:
        """Run a read under the lock with the current time."""
        with self.lock:
            return reader(self.state, self.clock())

    def replay_log(self) -> MemoState:
        """`fold(checkpoint, log)` from a copy of the checkpoint: must equal the live state."""
        with self.lock:
            return fold(list(self.log), self.checkpoint.clone())
