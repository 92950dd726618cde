"""Idempotency scoped per tool and fingerprinted by the call's arguments (06 §12)."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import msgspec

from mbank.memo.model import DEFAULT_IDEM_MAX_ENTRIES, IDEMPOTENCY_TTL_S, MemoError
from mbank.memo.timestamps import iso_seconds
from mbank.model import sha256_hex


class IdemRecord(msgspec.Struct, frozen=True):
    """What a keyed write left behind: its tool, fingerprint, time and response."""

    tool: str
    fingerprint: str
    at: float
    payload: dict[str, Any]


def fingerprint(arguments: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the arguments, `idempotency_key` excluded."""
    data = {k: v for k, v in arguments.items() if k != "idempotency_key"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_hex(text.encode("utf-8"))


class IdempotencyTable:
    """`key → record`, FIFO-capped, with a lazily checked 24 h TTL."""

    def __init__(
        self, max_entries: int = DEFAULT_IDEM_MAX_ENTRIES, ttl_s: float = IDEMPOTENCY_TTL_S
    ) -> None:
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self.records: OrderedDict[str, IdemRecord] = OrderedDict()

    def _expire(self, now: float) -> None:
        while self.records:
            key, record = next(iter(self.records.items()))
            if now - record.at < self.ttl_s:
                break
            del self.records[key]

    def lookup(
        self, tool: str, key: str, arguments: dict[str, Any], now: float
    ) -> dict[str, Any] | None:
        """The stored payload marked `replayed`, `None` for a new key, or a conflict."""
        if not key:
            return None
        self._expire(now)
        record = self.records.get(key)
        if record is None:
            return None
        if now - record.at >= self.ttl_s:
            del self.records[key]
            return None
        if record.tool != tool:
            raise MemoError(
                "idempotency_conflict",
                f'key "{key}" belongs to {record.tool} (used at {iso_seconds(record.at)}); '
                "a new operation needs a new key. Nothing was applied.",
            )
        if record.fingerprint != fingerprint(arguments):
            raise MemoError(
                "idempotency_conflict",
                f'key "{key}" was used at {iso_seconds(record.at)} for {tool} with other '
                "arguments; a new operation needs a new key. Nothing was applied.",
            )
        return {**record.payload, "replayed": True}

    def record(
        self, tool: str, key: str, arguments: dict[str, Any], now: float, payload: dict[str, Any]
    ) -> None:
        """Remember a successful keyed call; re-recording moves the key to the end."""
        if not key:
            return
        self.records.pop(key, None)
        self.records[key] = IdemRecord(tool, fingerprint(arguments), now, payload)
        while len(self.records) > self.max_entries:
            self.records.popitem(last=False)
