"""The merge of two journals: the union of their records by id, ordered by time then id.

The journal is append-only (spec 03 §14.2), so a merge keeps every record either side holds and
each line whole, byte for byte. The same id with two different lines is a conflict for that record
alone, between git's markers. A line that is not a record (not a JSON object with a string
`id` and `time`, or an earlier merge's markers) makes `merge_journal` answer None, and the
driver falls back to git's ordinary merge: never a record lost, never a guess.
"""

from __future__ import annotations

import msgspec

from mbank.gitmerge.index_merge import MARKER_SIZE


class _RecordKey(msgspec.Struct, frozen=True):
    """The two fields of a journal record the merge orders by; the rest is kept verbatim."""

    id: str
    time: str


class JournalMerge(msgspec.Struct, frozen=True):
    """The merged journal and how many records conflict."""

    text: bytes
    conflicts: int


_DECODER = msgspec.json.Decoder(_RecordKey)


def read_journal(data: bytes) -> dict[str, tuple[str, bytes]] | None:
    """Each record's id → (time, line without its newline), or None when a line is no record.

    A last line without its newline (a crash mid-append, spec 03 §14.6) still counts when it
    parses; the merged journal ends it.
    """
    records: dict[str, tuple[str, bytes]] = {}
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            key = _DECODER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if key.id in records and records[key.id][1] != line:
            return None
        records[key.id] = (key.time, line)
    return records


def merge_journal(
    ours: bytes, theirs: bytes, labels: tuple[str, str] = ("ours", "theirs")
) -> JournalMerge | None:
    """The union of both sides' records, or None when a side holds a line that is no record.

    The common ancestor decides nothing here: a record in it that neither side still holds
    is gone from both, and every other record is kept.
    """
    ours_records, theirs_records = read_journal(ours), read_journal(theirs)
    if ours_records is None or theirs_records is None:
        return None
    kept = {**theirs_records, **ours_records}
    order = sorted(kept, key=lambda record_id: (kept[record_id][0], record_id))
    lines: list[bytes] = []
    conflicts = 0
    for record_id in order:
        mine, other = ours_records.get(record_id), theirs_records.get(record_id)
        if mine is not None and other is not None and mine[1] != other[1]:
            conflicts += 1
            lines += [
                b"<" * MARKER_SIZE + b" " + labels[0].encode("utf-8"),
                mine[1],
                b"=" * MARKER_SIZE,
                other[1],
                b">" * MARKER_SIZE + b" " + labels[1].encode("utf-8"),
            ]
        else:
            lines.append(kept[record_id][1])
    text = b"".join(line + b"\n" for line in lines)
    return JournalMerge(text, conflicts)
