"""Crash recovery: rolling back the write-ahead entries a crash left (spec 03 §14.6)."""

from __future__ import annotations

import os

import msgspec

from mbank.journal import durable
from mbank.journal.durable import NotRegular, SymlinkTarget
from mbank.journal.layout import (
    LOCK_TIMEOUT,
    TEMP_PREFIX,
    TEMP_SUFFIX,
    bank_absolute,
    has_journal_dir,
    journal_path,
    log,
    wal_dir,
)
from mbank.journal.lock import bank_lock
from mbank.journal.objects import read_object
from mbank.journal.records import journal_bytes, parse_records
from mbank.journal.wal import WalEntry, WalOp, recreate_dirs
from mbank.plan import sha256_hex


def _truncate_partial_line(root: str) -> None:
    path = journal_path(root)
    try:
        data = journal_bytes(root)
    except OSError:
        return
    if not data or data.endswith(b"\n"):
        return
    keep = data.rfind(b"\n") + 1
    descriptor = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.ftruncate(descriptor, keep)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _remove_stray_temps(directory: str) -> None:
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX):
            durable.unlink_quietly(os.path.join(directory, name))


def _changed_after(op: WalOp, entry: WalEntry) -> None:
    log(f"{op.path} changed after the interrupted write {entry.id}; left as it is.")


def _roll_back_op(root: str, entry: WalEntry, op: WalOp) -> None:
    """Step 4 for one op: restore what the interrupted write swapped, leave the rest."""
    absolute = bank_absolute(root, op.path)
    try:
        current = durable.read_current(absolute)
    except (SymlinkTarget, NotRegular):
        _changed_after(op, entry)
        return
    digest = None if current.content is None else sha256_hex(current.content)
    if op.kind == "create":
        if digest is not None and digest == op.after:
            os.unlink(absolute)
            durable.fsync_dir(os.path.dirname(absolute))
        elif digest is not None:
            _changed_after(op, entry)
        return
    written = digest is None if op.kind == "delete" else digest == op.after
    if written and digest != op.before:
        preimage = op.preimage
        if preimage is None and op.before is not None:
            preimage = read_object(root, op.before)
        if preimage is None:
            log(f"{op.path}: the pre-image of the interrupted write {entry.id} is lost.")
            return
        mode = op.mode if op.mode is not None else current.mode
        durable.atomic_write(absolute, preimage, mode)
    elif digest != op.before:
        _changed_after(op, entry)


def _roll_back_entry(root: str, entry: WalEntry) -> None:
    recreate_dirs(root, entry.pruned)
    for op in reversed(entry.ops):
        _roll_back_op(root, entry, op)
    for directory in {os.path.dirname(bank_absolute(root, op.path)) for op in entry.ops}:
        _remove_stray_temps(directory)
    for directory in sorted(entry.dirs, key=lambda path: path.count("/"), reverse=True):
        absolute = bank_absolute(root, directory)
        try:
            os.rmdir(absolute)
        except OSError:
            continue
        durable.fsync_dir(os.path.dirname(absolute))


def recover(root: str) -> list[str]:
    """Roll back every write-ahead entry left by a crash; the caller holds the lock.

    Returns the ids rolled back. Entries whose record is already in the journal (the write
    had finished) and entries that do not parse (nothing was swapped yet) are just removed.
    """
    directory = wal_dir(root)
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".json"))
    except OSError:
        return []
    if not names:
        return []
    _truncate_partial_line(root)
    committed = {record.id for record in parse_records(journal_bytes(root))}
    rolled_back: list[str] = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as handle:
                entry = msgspec.json.decode(handle.read(), type=WalEntry)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            durable.unlink_quietly(path)
            durable.fsync_dir(directory)
            continue
        if entry.id in committed:
            durable.unlink_quietly(path)
            durable.fsync_dir(directory)
            continue
        _roll_back_entry(root, entry)
        durable.unlink_quietly(path)
        durable.fsync_dir(directory)
        log(f"rolled back an interrupted write ({entry.id}, {entry.tool}).")
        rolled_back.append(entry.id)
    return rolled_back


def recover_at_start(root: str, *, timeout: float = LOCK_TIMEOUT) -> list[str]:
    """Server start: when `.mbank/` exists, take the lock and roll back interrupted writes."""
    if not has_journal_dir(root):
        return []
    with bank_lock(root, "recover", timeout=timeout):
        return recover(root)
