"""What the journal tells a person: history, "where did it go?", undo's facts (spec 03 §14.8–10)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from mbank.journal import durable
from mbank.journal.confine import leads_outside, stored_path_problem
from mbank.journal.durable import NotRegular, SymlinkTarget
from mbank.journal.layout import bank_absolute
from mbank.journal.objects import read_object
from mbank.journal.records import read_records, record_data
from mbank.model import JournalRecord
from mbank.plan import sha256_hex


def _touches(record: JournalRecord, path: str) -> bool:
    return path in (record.from_, record.to) or any(op.path == path for op in record.ops)


def history(root: str, *, path: str | None = None, limit: int = 20) -> dict[str, Any]:
    """`{root, total, records}`: records newest first, at most `limit` (spec 03 §14.8).

    With `path` (a bank path), only records with an op on it or whose `from`/`to` equals it;
    `total` then counts the matching records (without it, every record in the journal).
    """
    records = read_records(root)
    if path is not None:
        records = [record for record in records if _touches(record, path)]
    newest_first = list(reversed(records))
    return {
        "root": root,
        "total": len(records),
        "records": [record_data(record) for record in newest_first[: max(limit, 0)]],
    }


def journal_resource(root: str) -> dict[str, Any]:
    """The data of `memorybank://journal`: the 50 most recent records (spec 04 §3)."""
    return history(root, limit=50)


def journal_summary(root: str) -> dict[str, Any]:
    """`{records, last?: {time, tool}}` for `mbank stats` (spec 04 §9.4)."""
    records = read_records(root)
    summary: dict[str, Any] = {"records": len(records)}
    if records:
        summary["last"] = {"time": records[-1].time, "tool": records[-1].tool}
    return summary


def where_did_it_go(root: str, bank_path: str) -> str | None:
    """The journal's explanation of a path that is no longer a document (spec 03 §14.9).

    The sentence to append after `Not a document of this bank: <p>. `, or None when the
    newest record touching the path did not delete it (or no record did).
    """
    for record in reversed(read_records(root)):
        op = next((op for op in record.ops if op.path == bank_path), None)
        if op is None:
            continue
        if op.kind != "delete":
            return None
        day = record.time[:10]
        if record.tool == "bank_promote" and record.from_ == bank_path and record.to:
            return f"It was promoted to {record.to} on {day} (journal {record.id})."
        if record.tool == "bank_discard":
            return f"It was discarded on {day} (journal {record.id}), with the reason: " + (
                record.reason or ""
            )
        return f"It was removed by {record.tool} on {day} (journal {record.id})."
    return None


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def format_history(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank history` (spec 04 §9.3)."""
    lines: list[str] = []
    for record in result["records"]:
        head = f"{record['id']}  {record['time']}  {record['tool']}  {_files(len(record['ops']))}"
        if record.get("reason"):
            head += f"  reason: {record['reason']}"
        lines.append(head)
        lines.extend(f"  {op['kind']:<7} {op['path']}" for op in record["ops"])
    if not lines:
        lines.append("(no records)")
    return "\n".join(lines) + "\n"


def current_hashes(root: str, paths: Sequence[str]) -> dict[str, str | None]:
    """The sha256 of each bank path's bytes now, None when nothing is there.

    A symbolic link or a non-file at the path, or a path that leaves the bank, gets a marker
    that matches no hash.
    """
    hashes: dict[str, str | None] = {}
    real_root = os.path.realpath(root)
    for path in paths:
        if stored_path_problem(path, root, real_root) or leads_outside(root, real_root, path):
            hashes[path] = "outside-the-bank"  # a record's path is read, never trusted
            continue
        try:
            content = durable.read_current(bank_absolute(root, path)).content
        except (SymlinkTarget, NotRegular):
            hashes[path] = "not-a-regular-file"
            continue
        hashes[path] = None if content is None else sha256_hex(content)
    return hashes


def undo_facts(root: str, record_id: str | None) -> dict[str, Any]:
    """What undo's planner needs: the journal, the target's files now, the pre-images kept.

    The target is the record `record_id`, else the newest one. Returned as plain values:
    `records` (JournalRecords, oldest first), `current` (path → sha256 or None) and `objects`
    (sha256 → bytes, for the pre-images present in `objects/`).
    """
    records = read_records(root)
    target = None
    if record_id is None:
        target = records[-1] if records else None
    else:
        target = next((record for record in records if record.id == record_id), None)
    current: dict[str, str | None] = {}
    found: dict[str, bytes] = {}
    if target is not None:
        current = current_hashes(root, [op.path for op in target.ops])
        for op in target.ops:
            if op.before is not None:
                content = read_object(root, op.before)
                if content is not None:
                    found[op.before] = content
    return {"records": tuple(records), "current": current, "objects": found}


def created_dirs(root: str, record_id: str) -> tuple[str, ...]:
    """The directories the journal record `record_id` says its write created (none if unknown)."""
    for record in reversed(read_records(root)):
        if record.id == record_id:
            return record.dirs
    return ()
