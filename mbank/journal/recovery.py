"""Crash recovery: settling the write-ahead entries a crash left (spec 03 §14.6).

It runs under the lock at the start of every real write (never at a server start or a read:
reads write nothing). `.mbank/` may be hostile — a cloned repository can carry any `wal/` — so
every path an entry names must pass a tool argument's confinement before a file is touched,
and an entry that fails is moved aside into `.mbank/quarantine/`, never applied. So is one
whose write recovery cannot take back (a damaged entry whose files were already swapped, a
pre-image that is gone): it says so on stderr, naming the files, and every write is then
refused, with the same sentence, until a person has looked and deleted `.mbank/quarantine/`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from contextlib import ExitStack, suppress
from enum import Enum

import msgspec

from mbank.journal import durable
from mbank.journal.confine import is_sha256, leads_outside, stored_path_problem
from mbank.journal.durable import NotRegular, SymlinkTarget
from mbank.journal.layout import (
    JOURNAL_FILE,
    LOCK_TIMEOUT,
    MBANK_DIR,
    QUARANTINE_DIR,
    TEMP_PREFIX,
    TEMP_SUFFIX,
    WAL_DIR,
    bank_absolute,
    has_journal_dir,
    log,
)
from mbank.journal.lock import bank_lock
from mbank.journal.objects import read_object
from mbank.journal.records import parse_records
from mbank.journal.tree import BadEntry, open_directory, open_file, open_mbank, read_file
from mbank.journal.wal import WalDir, WalEntry, WalOp, is_entry_name
from mbank.model import RefusalError
from mbank.paths import refuse
from mbank.plan import sha256_hex

REASON_SUFFIX = ".reason"


class _Fate(Enum):
    """What rolling back one op found."""

    RESTORED = "restored"  # the op was swapped; its pre-image is back (or its file removed)
    UNTOUCHED = "untouched"  # the file is as it was before the write
    CHANGED = "changed"  # neither before nor after: a person changed it; left as it is
    LOST = "lost"  # swapped, but the pre-image is gone: cannot be restored
    OUTSIDE = "outside"  # the path leads out of the bank on disk: not touched


def stopped_refusal(reason: str) -> RefusalError:
    """`recovery-stopped`: writes wait for a person to settle `.mbank/quarantine/`."""
    return refuse(
        "recovery-stopped",
        f"Writes to this bank are stopped until a person decides: {reason}. Once you have "
        "looked, delete .mbank/quarantine/ to allow writes again; nothing was written.",
    )


# --------------------------------------------------------------------------------------------
# Rolling back one entry's files
# --------------------------------------------------------------------------------------------


def _fate_of(root: str, real_root: str, entry_id: str, op: WalOp) -> _Fate:
    """Roll back one op (§14.6 step 4): restore what the interrupted write swapped."""
    if leads_outside(root, real_root, op.path):
        return _Fate.OUTSIDE
    absolute = bank_absolute(root, op.path)
    try:
        current = durable.read_current(absolute)
    except (SymlinkTarget, NotRegular):
        return _Fate.CHANGED
    digest = None if current.content is None else sha256_hex(current.content)
    if op.kind == "create":
        if digest is None:
            return _Fate.UNTOUCHED
        if digest != op.after:
            return _Fate.CHANGED
        os.unlink(absolute)
        durable.fsync_dir(os.path.dirname(absolute))
        return _Fate.RESTORED
    if digest == op.before:
        return _Fate.UNTOUCHED
    written = digest is None if op.kind == "delete" else digest == op.after
    if not written:
        return _Fate.CHANGED
    preimage = op.preimage
    if preimage is None and op.before is not None:
        preimage = read_object(root, op.before)
    if preimage is None or sha256_hex(preimage) != op.before:
        return _Fate.LOST
    mode = op.mode if op.mode is not None else current.mode
    durable.atomic_write(absolute, preimage, mode)
    return _Fate.RESTORED


def _is_settled(root: str, real_root: str, op: WalOp) -> bool:
    """True when the op's file is as it was before the write (nothing to roll back)."""
    if leads_outside(root, real_root, op.path):
        return False
    try:
        content = durable.read_current(bank_absolute(root, op.path)).content
    except (SymlinkTarget, NotRegular):
        return False
    if op.kind == "create":
        return content is None
    return content is not None and sha256_hex(content) == op.before


def _recreate_dirs(root: str, real_root: str, removed: Sequence[WalDir]) -> None:
    """Re-create pruned directories that are missing, shallowest first, with their bits."""
    for entry in sorted(removed, key=lambda item: item.path.count("/")):
        absolute = bank_absolute(root, entry.path)
        if os.path.lexists(absolute) or leads_outside(root, real_root, entry.path):
            continue
        os.mkdir(absolute, entry.mode)
        os.chmod(absolute, entry.mode)
        durable.fsync_dir(os.path.dirname(absolute))


def _tidy_directories(root: str, real_root: str, ops: Sequence[WalOp], dirs: Sequence[str]) -> None:
    """§14.6 step 5: stray temp files in the ops' directories; the entry's new directories
    when empty, deepest first. Only where the path stays inside the bank."""
    parents = {op.path.rpartition("/")[0] for op in ops}
    for parent in parents:
        if parent and leads_outside(root, real_root, parent):
            continue
        directory = bank_absolute(root, parent) if parent else root
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX):
                durable.unlink_quietly(os.path.join(directory, name))
    for directory in sorted(dirs, key=lambda path: path.count("/"), reverse=True):
        if leads_outside(root, real_root, directory):
            continue
        absolute = bank_absolute(root, directory)
        try:
            os.rmdir(absolute)
        except OSError:
            continue
        durable.fsync_dir(os.path.dirname(absolute))


def _roll_back(root: str, real_root: str, entry_id: str, ops: Sequence[WalOp]) -> list[str]:
    """Roll back `ops` in reverse order; the paths that could not be restored."""
    lost: list[str] = []
    for op in reversed(ops):
        fate = _fate_of(root, real_root, entry_id, op)
        if fate is _Fate.CHANGED:
            log(f"{op.path} changed after the interrupted write {entry_id}; left as it is.")
        elif fate in (_Fate.LOST, _Fate.OUTSIDE):
            lost.append(op.path)
    return list(reversed(lost))


# --------------------------------------------------------------------------------------------
# Reading an entry that may be hostile or damaged
# --------------------------------------------------------------------------------------------


def _problem(entry: WalEntry, root: str, real_root: str) -> str | None:
    """Why the entry may not be applied (a path outside the bank, a bad hash), or None."""
    for op in entry.ops:
        problem = stored_path_problem(op.path, root, real_root)
        if problem is not None:
            return problem
        if op.kind not in ("create", "replace", "delete"):
            return f"an op of unknown kind {op.kind!r}"
        for value in (op.before, op.after):
            if value is not None and not is_sha256(value):
                return f"a hash that is not a sha256 ({value[:20]!r})"
    for directory in (*entry.dirs, *(item.path for item in entry.pruned)):
        problem = stored_path_problem(directory, root, real_root)
        if problem is not None:
            return problem
    return None


def _salvage(data: bytes) -> tuple[str | None, list[WalOp], bool]:
    """From an entry that does not parse: its id, the ops that still read, whether all did."""
    text = data.decode("utf-8", "replace")
    found = re.search(r'"id"\s*:\s*"([0-9A-Za-z-]{1,80})"', text)
    ops: list[WalOp] = []
    start = re.search(r'"ops"\s*:\s*\[', text)
    if start is None:
        return (found.group(1) if found else None), ops, False
    decoder = json.JSONDecoder()
    position = start.end()
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if text.startswith("]", position):
            return (found.group(1) if found else None), ops, True
        try:
            _value, end = decoder.raw_decode(text, position)
            ops.append(msgspec.json.decode(text[position:end].encode("utf-8"), type=WalOp))
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
            return (found.group(1) if found else None), ops, False
        position = end


class _Recovery:
    """One recovery pass over `.mbank/wal/`, with `.mbank/` and `wal/` open (no link followed)."""

    def __init__(self, root: str, base: int, wal: int) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.base = base
        self.wal = wal
        self.rolled_back: list[str] = []

    def quarantine(self, name: str, reason: str) -> None:
        """Move the entry `name` aside into `.mbank/quarantine/`, with its reason (the
        refusal `recover` then raises says it)."""
        shown = f"{MBANK_DIR}/{QUARANTINE_DIR}"
        aside = open_directory(self.base, QUARANTINE_DIR, shown, create=True)
        try:
            os.rename(name, name, src_dir_fd=self.wal, dst_dir_fd=aside)
            with suppress(FileExistsError):
                durable.write_temp_at(
                    aside, (reason + "\n").encode("utf-8"), 0o644, name=name + REASON_SUFFIX
                )
            os.fsync(aside)
        finally:
            os.close(aside)
        os.fsync(self.wal)

    def remove(self, name: str) -> None:
        with suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.wal)
        os.fsync(self.wal)

    def settle(self, name: str, committed: set[str]) -> None:
        """Settle the entry `wal/<name>`: removed, rolled back, or moved into quarantine."""
        shown = f"{MBANK_DIR}/{WAL_DIR}/{name}"
        try:
            data = read_file(self.wal, name, shown)
        except BadEntry as bad:
            self.quarantine(name, f"the write-ahead entry {name} is {bad.found}, not a file")
            return
        if data is None:
            return
        try:
            entry = msgspec.json.decode(data, type=WalEntry)
        except (msgspec.DecodeError, msgspec.ValidationError):
            self.settle_damaged(name, shown, data)
            return
        problem = _problem(entry, self.root, self.real_root)
        if problem is not None:
            self.quarantine(
                name,
                f"the write-ahead entry {name} names what no write makes ({problem}), so it "
                "was not applied",
            )
            return
        if entry.id in committed:
            self.remove(name)
            return
        _recreate_dirs(self.root, self.real_root, entry.pruned)
        lost = _roll_back(self.root, self.real_root, entry.id, entry.ops)
        _tidy_directories(self.root, self.real_root, entry.ops, entry.dirs)
        if lost:
            self.quarantine(
                name,
                f"the interrupted write {entry.id} could not be rolled back: the earlier "
                f"content of {', '.join(lost)} is gone",
            )
            return
        self.remove(name)
        log(f"rolled back an interrupted write ({entry.id}, {entry.tool}).")
        self.rolled_back.append(entry.id)

    def settle_damaged(self, name: str, shown: str, data: bytes) -> None:
        """An entry that does not parse was damaged after it was written (it is renamed into
        place only once complete): restore what its readable ops name, from `objects/`."""
        entry_id, ops, complete = _salvage(data)
        problems = [stored_path_problem(op.path, self.root, self.real_root) for op in ops]
        problem = next((found for found in problems if found is not None), None)
        if problem is not None:
            self.quarantine(
                name,
                f"the write-ahead entry {name} is damaged and names what no write makes "
                f"({problem}), so it was not applied",
            )
            return
        if ops and _is_settled(self.root, self.real_root, ops[0]):
            # Ops are swapped in order: the first one untouched means none was swapped.
            self.remove(name)
            log(f"removed the damaged {shown}: none of its files had been changed.")
            return
        label = entry_id or name
        lost = _roll_back(self.root, self.real_root, label, ops)
        if complete and not lost and ops:
            _tidy_directories(self.root, self.real_root, ops, ())
            self.remove(name)
            log(f"rolled back an interrupted write from its damaged entry ({label}).")
            self.rolled_back.append(label)
            return
        if lost:
            named = f"{', '.join(lost)} could not be restored"
        elif ops:
            named = (
                f"{', '.join(op.path for op in ops)} were restored; the files named in its "
                "damaged part are unknown"
            )
        else:
            named = "no file it names can be read"
        self.quarantine(
            name,
            f"the write-ahead entry {name} is damaged and may belong to a half-applied write "
            f"({named})",
        )


def _settle_journal_tail(base: int) -> None:
    """§14.6 step 1, for a journal that may end in a line without its newline.

    A tail that is the start of a record but not a whole one (a crash mid-append) is cut; a
    whole record without its newline (a hand edit, a bad merge) or any other text is a
    person's and stays: the next record starts on a line of its own anyway.
    """
    shown = f"{MBANK_DIR}/{JOURNAL_FILE}"
    data = read_file(base, JOURNAL_FILE, shown)
    if not data or data.endswith(b"\n"):
        return
    keep = data.rfind(b"\n") + 1
    tail = data[keep:]
    if not tail.startswith(b'{"v":') or parse_records(tail, quiet=True):
        return
    descriptor = open_file(base, JOURNAL_FILE, shown, os.O_WRONLY)
    try:
        os.ftruncate(descriptor, keep)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _stop_reason(base: int) -> str | None:
    """The first reason in `.mbank/quarantine/`, None when it holds nothing."""
    shown = f"{MBANK_DIR}/{QUARANTINE_DIR}"
    try:
        aside = open_directory(base, QUARANTINE_DIR, shown)
    except FileNotFoundError:
        return None
    try:
        names = sorted(os.listdir(aside))
        if not names:
            return None
        reasons: list[str] = []
        for name in names:
            if name.endswith(REASON_SUFFIX):
                with suppress(OSError, BadEntry):
                    text = (read_file(aside, name, f"{shown}/{name}") or b"").decode(
                        "utf-8", "replace"
                    )
                    if text.strip():
                        reasons.append(text.strip())
        if not reasons:
            return f"{shown}/ holds {names[0]}, which a person has to look at"
        more = len(reasons) - 1
        return reasons[0] + (f" (and {more} more in {shown}/)" if more else "")
    finally:
        os.close(aside)


def recover(root: str) -> list[str]:
    """Settle every write-ahead entry left by a crash; the caller holds the lock.

    Returns the ids rolled back. Entries whose record is already in the journal (the write
    had finished) are just removed. Refuses `recovery-stopped` while `.mbank/quarantine/`
    holds an entry (this pass's or an earlier one's) that a person has to decide about.
    """
    with ExitStack() as stack:
        try:
            base = open_mbank(root)
        except FileNotFoundError:
            return []
        except BadEntry as bad:
            raise bad.refusal() from None
        stack.callback(os.close, base)
        try:
            wal = open_directory(base, WAL_DIR, f"{MBANK_DIR}/{WAL_DIR}")
        except FileNotFoundError:
            wal = None
        except BadEntry as bad:
            raise bad.refusal() from None
        recovery: _Recovery | None = None
        if wal is not None:
            stack.callback(os.close, wal)
            recovery = _Recovery(root, base, wal)
            names = sorted(os.listdir(wal))
            for name in names:
                if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                    recovery.remove(name)  # an entry never renamed into place: nothing swapped
            entries = [name for name in names if is_entry_name(name)]
            if entries:
                _settle_journal_tail(base)
                data = read_file(base, JOURNAL_FILE, f"{MBANK_DIR}/{JOURNAL_FILE}") or b""
                committed = {record.id for record in parse_records(data)}
                for name in entries:
                    recovery.settle(name, committed)
        reason = _stop_reason(base)
        if reason is not None:
            raise stopped_refusal(reason)
        return recovery.rolled_back if recovery is not None else []


def recover_at_start(root: str, *, timeout: float = LOCK_TIMEOUT) -> list[str]:
    """An explicit recovery (tests, tools): when `.mbank/` exists, take the lock and settle
    interrupted writes. A server start no longer calls it: recovery belongs to a write."""
    if not has_journal_dir(root):
        return []
    with bank_lock(root, "recover", timeout=timeout):
        return recover(root)
