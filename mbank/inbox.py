"""The quarantine listing: `memorybank://inbox` and `mbank inbox` (spec 04 §3, §9.3).

A pure function of the snapshot and the current time: every document in the inbox layer with
its age in whole days (from the file's mtime), oldest first, so the notes waiting longest for
a review come first. A note whose mtime lies in the future (a clock skew) is 0 days old.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mbank.model import INBOX_LAYER
from mbank.projection import Snapshot

DAY_NS = 86_400 * 1_000_000_000


def inbox_listing(snapshot: Snapshot, now: datetime) -> dict[str, Any]:
    """`{root, count, entries: {path, title, purpose, docKind, status, ageDays, bytes}[]}`."""
    now_ns = int(now.timestamp() * 1_000_000_000)
    entries: list[dict[str, Any]] = []
    for doc in snapshot.docs.values():
        if doc.layer != INBOX_LAYER:
            continue
        entries.append(
            {
                "path": doc.path,
                "title": doc.title,
                "purpose": doc.purpose,
                "docKind": doc.doc_kind,
                "status": doc.status,
                "ageDays": max(0, (now_ns - doc.mtime_ns) // DAY_NS),
                "bytes": doc.size,
            }
        )
    entries.sort(key=lambda entry: (-entry["ageDays"], entry["path"]))
    return {"root": snapshot.root, "count": len(entries), "entries": entries}


def format_inbox(result: Mapping[str, Any]) -> str:
    """The human rendering: `(inbox empty)`, or per note its age, path and kind, then title
    and purpose indented, a blank line; `total: N` (an empty kind shows as `?`, an empty
    purpose leaves its line out)."""
    entries = result["entries"]
    if not entries:
        return "(inbox empty)\n"
    lines: list[str] = []
    for entry in entries:
        lines.append(f"{entry['ageDays']:>4}d  {entry['path']}  [{entry['docKind'] or '?'}]")
        lines.append(" " * 7 + entry["title"])
        if entry["purpose"]:
            lines.append(" " * 7 + entry["purpose"])
        lines.append("")
    lines.append(f"total: {result['count']}")
    return "\n".join(lines) + "\n"
