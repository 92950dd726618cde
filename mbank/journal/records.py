"""Journal records: ids, reading `journal.jsonl`, and what a record keeps (spec 03 §14.2)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec

from mbank.journal.layout import INTENT_STRING_LIMIT, JOURNAL_FILE, log
from mbank.journal.tree import read_mbank_file
from mbank.model import FileRead, JournalRecord, Plan, RecordOp
from mbank.plan import sha256_hex


def format_time(moment: datetime) -> str:
    """A UTC time as the journal writes it: `2026-09-14T12:05:01Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def random_journal_id(moment: datetime) -> str:
    """`<YYYYMMDDTHHMMSSZ>-<6 random lower-case hex digits>` (§14.2)."""
    return f"{moment.astimezone(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def journal_bytes(root: str) -> bytes:
    """The bytes of `journal.jsonl`, empty when there is none (or it is not a plain file:
    a link or a directory there is never followed, only noted on stderr)."""
    return read_mbank_file(root, JOURNAL_FILE) or b""


def _holds_id(data: bytes, candidate: str) -> bool:
    # A byte search, not a parse: a false hit (the id quoted in an undo's intent) only costs
    # a regeneration.
    return b'"id":"' + candidate.encode("utf-8") + b'"' in data


def journal_has_id(root: str, candidate: str) -> bool:
    """True when a journal line may already carry this id."""
    return _holds_id(journal_bytes(root), candidate)


def fresh_journal_id(
    root: str,
    moment: datetime,
    make_id: Callable[[datetime], str] = random_journal_id,
    first: str | None = None,
) -> str:
    """A journal id no record holds yet (`first` if free), regenerated while one does (§14.2)."""
    data = journal_bytes(root)
    if first is not None and not _holds_id(data, first):
        return first
    for _attempt in range(100):
        candidate = make_id(moment)
        if not _holds_id(data, candidate):
            return candidate
    raise RuntimeError("could not find an unused journal id")


def parse_records(
    data: bytes, *, source: str = ".mbank/journal.jsonl", quiet: bool = False
) -> list[JournalRecord]:
    """The records of a journal's bytes in file order; a line that does not parse is skipped
    (and noted on stderr unless `quiet`)."""
    records: list[JournalRecord] = []
    decoder = msgspec.json.Decoder(JournalRecord)
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            if not quiet:
                log(f"skipped line {number} of {source}: it does not parse.")
    return records


def read_records(root: str) -> list[JournalRecord]:
    """Every record of the bank's journal, oldest first; reads only, never takes the lock."""
    return parse_records(journal_bytes(root))


def record_data(record: JournalRecord) -> dict[str, Any]:
    """A record as plain JSON data (`JournalRecord` of spec 03 §14.2, optional keys omitted)."""
    data: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(record))
    return data


def compact_intent(
    arguments: Mapping[str, Any], files: Mapping[str, FileRead]
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The intent a record keeps, and the objects it refers to (§14.2).

    Strings longer than 4,096 UTF-8 bytes, at any depth, become `{"sha256", "bytes"}` and go
    to `objects/`. For each file argument read (`bodyFile`, `contentFile`) the path is kept
    and `<name>Content` holds `{"sha256", "bytes"}` of what was read; that text is stored as an
    object too, so the record can always be replayed by hand.
    """
    objects: dict[str, bytes] = {}

    def compact(value: Any) -> Any:
        if isinstance(value, str):
            encoded = value.encode("utf-8", "surrogatepass")
            if len(encoded) > INTENT_STRING_LIMIT:
                digest = sha256_hex(encoded)
                objects[digest] = encoded
                return {"sha256": digest, "bytes": len(encoded)}
            return value
        if isinstance(value, Mapping):
            return {str(key): compact(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [compact(item) for item in value]
        return value

    intent: dict[str, Any] = {}
    for key, value in arguments.items():
        intent[key] = compact(value)
        read = files.get(key)
        if read is not None and read.text is not None:
            encoded = read.text.encode("utf-8")
            digest = sha256_hex(encoded)
            objects[digest] = encoded
            intent[f"{key}Content"] = {"sha256": digest, "bytes": len(encoded)}
    return intent, objects


def record_ops(plan: Plan) -> tuple[RecordOp, ...]:
    """The ops of a plan as a record keeps them: path, kind and hashes, no content."""
    return tuple(RecordOp(op.path, op.kind, op.before, op.after) for op in plan.ops)
