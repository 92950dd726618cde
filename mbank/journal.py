"""The journal: every byte a write puts on disk goes through here (spec 03 §14).

`.mbank/` in the bank holds `journal.jsonl` (one record per applied write), `wal/` (the plan
being applied, with its pre-images), `objects/` (content-addressed pre-images for `undo`),
`lock` (the advisory lock) and a `.gitignore`. A plan is applied under the lock as: check
every precondition, store pre-images, write and fsync the write-ahead entry, swap each file
(temp file + fsync + `os.replace` in the target directory + directory fsync), append the
record, delete the entry. Any failure restores the exact pre-images; a crash leaves the entry,
and `recover()` rolls it back before anything else runs.

Crash tests name the operation boundaries (spec 07 §4.1): `wal-written`, `wal-synced`, then per
op *i* (1-based) `op-<i>-temp`, `op-<i>-swapped`, `op-<i>-dirsynced`, then `journal-partial`,
`journal-appended`, `wal-removed`. A process started with `MBANK_FAULT_INJECTION=1` and
`MBANK_FAULT=<point>` sends itself SIGKILL there; the variables are not read otherwise. In
process, a `fault` callable passed to `apply_plan` is called at each point (tests raise from it).
"""

from __future__ import annotations

import base64
import errno
import fcntl
import os
import secrets
import signal
import stat
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from typing import Any

import msgspec

from mbank.model import (
    AnyFileOp,
    CreateFile,
    DeleteFile,
    FileRead,
    JournalRecord,
    Plan,
    RecordOp,
    RefusalError,
)
from mbank.model import sha256_hex as _sha
from mbank.paths import is_within as _inside
from mbank.paths import refuse

MBANK_DIR = ".mbank"
JOURNAL_FILE = "journal.jsonl"
WAL_DIR = "wal"
OBJECTS_DIR = "objects"
LOCK_FILE = "lock"
GITIGNORE_FILE = ".gitignore"
GITIGNORE_TEXT = "wal/\nlock\nobjects/\n"
RECORD_VERSION = 1
LOCK_TIMEOUT = 10.0
LOCK_INTERVAL = 0.05
INTENT_STRING_LIMIT = 4096
TEMP_PREFIX = ".mbank-"
TEMP_SUFFIX = ".tmp"
DIRECTORY_MODE = 0o755

FaultHook = Callable[[str], None]

LOCK_BUSY = (
    "Another write to this bank is in progress (.mbank/lock is held); nothing was written. "
    "Try again."
)


def _log(message: str) -> None:
    print(f"mbank: {message}", file=sys.stderr, flush=True)


def mbank_version() -> str:
    """The installed distribution's version, `0.0.0` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mbank")
    except PackageNotFoundError:  # pragma: no cover - bare checkout
        return "0.0.0"


# --------------------------------------------------------------------------------------------
# Places
# --------------------------------------------------------------------------------------------


def journal_dir(root: str) -> str:
    """`<root>/.mbank`."""
    return os.path.join(root, MBANK_DIR)


def journal_path(root: str) -> str:
    """`<root>/.mbank/journal.jsonl`."""
    return os.path.join(root, MBANK_DIR, JOURNAL_FILE)


def wal_dir(root: str) -> str:
    """`<root>/.mbank/wal`."""
    return os.path.join(root, MBANK_DIR, WAL_DIR)


def object_path(root: str, digest: str) -> str:
    """Where the object with this sha256 lives: `objects/<2 hex>/<62 hex>` (§14.3)."""
    return os.path.join(root, MBANK_DIR, OBJECTS_DIR, digest[:2], digest[2:])


def has_journal_dir(root: str) -> bool:
    """True when the bank has a `.mbank/` directory (a real write has happened here)."""
    return os.path.isdir(journal_dir(root))


def _absolute(root: str, bank_path: str) -> str:
    return os.path.join(root, *bank_path.split("/"))


# --------------------------------------------------------------------------------------------
# Small IO primitives
# --------------------------------------------------------------------------------------------


def _fsync_dir(directory: str) -> None:
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


def _write_temp(directory: str, content: bytes, mode: int | None) -> str:
    """A fsynced hidden temp file in `directory` holding `content`; returns its path.

    New files get `0o666` minus the umask (the kernel applies it); `mode` sets other bits.
    """
    name = os.path.join(directory, f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}")
    descriptor = os.open(
        name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666
    )
    try:
        _write_all(descriptor, content)
        if mode is not None:
            os.fchmod(descriptor, mode)
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        _unlink_quietly(name)
        raise
    os.close(descriptor)
    return name


def _unlink_quietly(path: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


def _atomic_write(target: str, content: bytes, mode: int | None) -> None:
    directory = os.path.dirname(target)
    temp = _write_temp(directory, content, mode)
    try:
        os.replace(temp, target)
    except BaseException:
        _unlink_quietly(temp)
        raise
    _fsync_dir(directory)


class _NotRegular(Exception):
    pass


class _SymlinkTarget(Exception):
    pass


class _Current(msgspec.Struct, frozen=True):
    content: bytes | None
    mode: int | None


def _read_current(absolute: str) -> _Current:
    """The bytes and permission bits at `absolute` now; content None when nothing is there."""
    try:
        descriptor = os.open(absolute, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if os.path.lexists(absolute):  # a dangling symlink
            raise _SymlinkTarget(absolute) from None
        return _Current(None, None)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _SymlinkTarget(absolute) from exc
        raise
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise _NotRegular(absolute)
        chunks: list[bytes] = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return _Current(b"".join(chunks), stat.S_IMODE(info.st_mode))
    finally:
        os.close(descriptor)


def _check_not_through_symlink(absolute: str, real_root: str, bank_path: str) -> None:
    """Refuse `path-symlink` when the target, or its deepest existing ancestor, leaves the bank."""
    probe = absolute
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if os.path.islink(absolute) or not _inside(os.path.realpath(probe), real_root):
        raise refuse(
            "path-symlink", f"Path leads outside the bank through a symbolic link: {bank_path}"
        )


def changed_on_disk(bank_path: str) -> RefusalError:
    """The precondition refusal of spec 03 §14.7."""
    return refuse(
        "changed-on-disk",
        f"{bank_path} changed on disk by someone else since it was read; nothing was written.",
    )


# --------------------------------------------------------------------------------------------
# The directory, the lock
# --------------------------------------------------------------------------------------------


def ensure_journal_dir(root: str) -> None:
    """Create `.mbank/` with `wal/` and `objects/` (mode 0755) and its `.gitignore` if missing.

    An existing `.gitignore` is never overwritten (§14.1). Safe when two processes race.
    """
    base = journal_dir(root)
    created = False
    for directory in (base, os.path.join(base, WAL_DIR), os.path.join(base, OBJECTS_DIR)):
        try:
            os.mkdir(directory, DIRECTORY_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIRECTORY_MODE)
        created = True
    ignore = os.path.join(base, GITIGNORE_FILE)
    if not os.path.lexists(ignore):
        try:
            descriptor = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            pass
        else:
            try:
                _write_all(descriptor, GITIGNORE_TEXT.encode("ascii"))
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            created = True
    if created:
        _fsync_dir(base)
        _fsync_dir(root)


@contextmanager
def bank_lock(
    root: str,
    tool: str,
    *,
    timeout: float = LOCK_TIMEOUT,
    interval: float = LOCK_INTERVAL,
) -> Iterator[None]:
    """Hold `.mbank/lock` (flock, retried every 50 ms up to `timeout` s), or refuse `lock-busy`."""
    descriptor = os.open(
        os.path.join(journal_dir(root), LOCK_FILE), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise refuse("lock-busy", LOCK_BUSY) from None
                time.sleep(interval)
        try:
            # Informational only: who holds it (§14.4). Written over the old content and cut
            # only when the old content was longer: a truncation costs a metadata change on
            # every write, for a file whose content nobody relies on.
            holder = f"{os.getpid()} {tool}\n".encode()
            os.pwrite(descriptor, holder, 0)
            if os.fstat(descriptor).st_size > len(holder):
                os.ftruncate(descriptor, len(holder))
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def lock_is_free(root: str) -> bool:
    """True when nobody holds `.mbank/lock` (for tests and diagnostics)."""
    path = os.path.join(journal_dir(root), LOCK_FILE)
    if not os.path.exists(path):
        return True
    descriptor = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)
    return True


# --------------------------------------------------------------------------------------------
# Ids, times, reading the journal
# --------------------------------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """A UTC time as the journal writes it: `2026-09-14T12:05:01Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def random_journal_id(moment: datetime) -> str:
    """`<YYYYMMDDTHHMMSSZ>-<6 random lower-case hex digits>` (§14.2)."""
    return f"{moment.astimezone(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def _journal_bytes(root: str) -> bytes:
    try:
        with open(journal_path(root), "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return b""


def _holds_id(data: bytes, candidate: str) -> bool:
    # A byte search, not a parse: a false hit (the id quoted in an undo's intent) only costs
    # a regeneration.
    return b'"id":"' + candidate.encode("utf-8") + b'"' in data


def journal_has_id(root: str, candidate: str) -> bool:
    """True when a journal line may already carry this id."""
    return _holds_id(_journal_bytes(root), candidate)


def fresh_journal_id(
    root: str,
    moment: datetime,
    make_id: Callable[[datetime], str] = random_journal_id,
    first: str | None = None,
) -> str:
    """A journal id no record holds yet (`first` if free), regenerated while one does (§14.2)."""
    data = _journal_bytes(root)
    if first is not None and not _holds_id(data, first):
        return first
    for _attempt in range(100):
        candidate = make_id(moment)
        if not _holds_id(data, candidate):
            return candidate
    raise RuntimeError("could not find an unused journal id")


def parse_records(data: bytes, *, source: str = ".mbank/journal.jsonl") -> list[JournalRecord]:
    """The records of a journal's bytes in file order; a line that does not parse is skipped."""
    records: list[JournalRecord] = []
    decoder = msgspec.json.Decoder(JournalRecord)
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            _log(f"skipped line {number} of {source}: it does not parse.")
    return records


def read_records(root: str) -> list[JournalRecord]:
    """Every record of the bank's journal, oldest first; reads only, never takes the lock."""
    return parse_records(_journal_bytes(root))


def record_data(record: JournalRecord) -> dict[str, Any]:
    """A record as plain JSON data (`JournalRecord` of spec 03 §14.2, optional keys omitted)."""
    data: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(record))
    return data


def pending_wal_ids(root: str) -> list[str]:
    """The ids of write-ahead entries on disk (interrupted writes), in name order."""
    try:
        names = os.listdir(wal_dir(root))
    except OSError:
        return []
    return sorted(name[: -len(".json")] for name in names if name.endswith(".json"))


def interrupted_notices(root: str) -> list[str]:
    """What a read-only subcommand prints on stderr for each interrupted write (§14.6)."""
    return [
        f"mbank: a write was interrupted ({entry}); start the server or run any write to roll "
        "it back."
        for entry in pending_wal_ids(root)
    ]


# --------------------------------------------------------------------------------------------
# Objects and intents
# --------------------------------------------------------------------------------------------


def store_object(root: str, content: bytes) -> str:
    """Store `content` under its sha256 in `objects/` (skipped when present); return the hash."""
    digest = _sha(content)
    target = object_path(root, digest)
    if os.path.exists(target):
        return digest
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)
        # The new `objects/<2 hex>/` entry must be as durable as the object inside it.
        _fsync_dir(os.path.dirname(directory))
    temp = _write_temp(directory, content, 0o644)
    os.replace(temp, target)
    _fsync_dir(directory)
    return digest


def read_object(root: str, digest: str) -> bytes | None:
    """The object with this sha256, or None when it is missing (or does not match its name)."""
    try:
        with open(object_path(root, digest), "rb") as handle:
            content = handle.read()
    except OSError:
        return None
    return content if _sha(content) == digest else None


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
                digest = _sha(encoded)
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
            digest = _sha(encoded)
            objects[digest] = encoded
            intent[f"{key}Content"] = {"sha256": digest, "bytes": len(encoded)}
    return intent, objects


def record_ops(plan: Plan) -> tuple[RecordOp, ...]:
    """The ops of a plan as a record keeps them: path, kind and hashes, no content."""
    return tuple(RecordOp(op.path, op.kind, op.before, op.after) for op in plan.ops)


# --------------------------------------------------------------------------------------------
# Write-ahead entries
# --------------------------------------------------------------------------------------------


class WalOp(msgspec.Struct, frozen=True):
    """One op of a write-ahead entry, with the pre-image needed to roll it back.

    `mode` (mbank's addition to §14.5's shape) is the pre-image's permission bits, so that a
    rolled-back delete comes back with the bits it had.
    """

    path: str
    kind: str
    before: str | None
    after: str | None
    preimage: bytes | None
    mode: int | None = None


class WalDir(msgspec.Struct, frozen=True):
    """A directory an apply may remove once its deletes leave it empty, with its bits."""

    path: str
    mode: int


class WalEntry(msgspec.Struct, frozen=True):
    """`.mbank/wal/<id>.json`: a plan being applied (§14.5 step 4).

    `pruned` (mbank's addition to §14.5's shape, absent from older entries) lists the
    directories this apply may remove once its deletes leave them empty (undo does, see
    `apply_plan`), deepest first; recovery re-creates the missing ones before it restores
    the files that lived in them.
    """

    id: str
    tool: str
    time: str
    ops: tuple[WalOp, ...]
    dirs: tuple[str, ...]
    pruned: tuple[WalDir, ...] = ()


def _directories_to_create(root: str, plan: Plan) -> tuple[str, ...]:
    """Missing ancestor directories of create ops, as bank paths, shallowest first."""
    missing: list[str] = []
    for op in plan.ops:
        if not isinstance(op, CreateFile):
            continue
        segments = op.path.split("/")[:-1]
        for depth in range(1, len(segments) + 1):
            directory = "/".join(segments[:depth])
            if directory in missing:
                continue
            if not os.path.lexists(_absolute(root, directory)):
                missing.append(directory)
    return tuple(sorted(missing, key=lambda path: (path.count("/"), missing.index(path))))


def _prune_candidates(root: str, prune: Sequence[str]) -> tuple[WalDir, ...]:
    """The directories of `prune` that are real directories now, deepest first, with bits.

    A symlinked directory or a missing one is never a candidate; the bits are kept so that a
    rollback re-creates a removed directory exactly.
    """
    found: dict[str, int] = {}
    for directory in prune:
        if not directory or directory in found:
            continue
        try:
            info = os.lstat(_absolute(root, directory))
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            found[directory] = stat.S_IMODE(info.st_mode)
    ordered = sorted(found, key=lambda path: path.count("/"), reverse=True)
    return tuple(WalDir(path, found[path]) for path in ordered)


def _recreate_dirs(root: str, removed: Sequence[WalDir]) -> None:
    """Re-create removed directories that are missing, shallowest first, with their bits."""
    for entry in sorted(removed, key=lambda item: item.path.count("/")):
        absolute = _absolute(root, entry.path)
        if os.path.lexists(absolute):
            continue
        os.mkdir(absolute, entry.mode)
        os.chmod(absolute, entry.mode)
        _fsync_dir(os.path.dirname(absolute))


def _directory_syncs(
    steps: Sequence[_Step], created_at: Sequence[Sequence[str]], root: str
) -> list[list[str]]:
    """Per op (0-based), the directories to fsync right after its swap: each one once.

    Op *i* needs its target's directory and the parent of every directory it created made
    durable; each such directory is fsynced after the LAST op that needs it, not after
    every op (§14.5 step 5 says "fsync the directory" per op; see `apply_plan` for why once
    is enough).
    """
    last: dict[str, int] = {}
    for number, step in enumerate(steps):
        needed = [os.path.dirname(step.absolute)]
        needed.extend(os.path.dirname(_absolute(root, new_dir)) for new_dir in created_at[number])
        for directory in needed:
            last[directory] = number
    syncs: list[list[str]] = [[] for _ in steps]
    for directory, number in last.items():
        syncs[number].append(directory)
    # Deepest first: a new directory's own entries before its entry in the parent.
    for group in syncs:
        group.sort(key=lambda path: path.count(os.sep), reverse=True)
    return syncs


def _faults(fault: FaultHook | None) -> FaultHook | None:
    point = None
    if os.environ.get("MBANK_FAULT_INJECTION") == "1":
        point = os.environ.get("MBANK_FAULT")
    if point is None:
        return fault

    def hook(name: str) -> None:
        if fault is not None:
            fault(name)
        if name == point:
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


class _Step(msgspec.Struct):
    op: AnyFileOp
    absolute: str
    preimage: bytes | None
    mode: int | None
    swapped: bool = False


def _error_text(exc: BaseException, root: str) -> str:
    """An exception as one short clause for a refusal: the OS reason and the bank path."""
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror[0].lower() + exc.strerror[1:]
        named = exc.filename2 or exc.filename  # os.replace(temp, target): name the target
        if named:
            name = os.fsdecode(named)
            prefix = root.rstrip(os.sep) + os.sep
            if name.startswith(prefix):
                name = name[len(prefix) :]
            return f"{reason}: {name}"
        return reason
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _roll_back(
    root: str,
    steps: Sequence[_Step],
    created: Sequence[str],
    temps: Sequence[str],
    removed: Sequence[WalDir] = (),
) -> None:
    """Undo the swaps made so far (reverse order), then stray temp files and new directories.

    Directories the apply had removed come back first, so the files restored into them fit.
    """
    for temp in temps:
        _unlink_quietly(temp)
    _recreate_dirs(root, removed)
    for step in reversed(steps):
        if not step.swapped:
            continue
        current = _read_current(step.absolute).content
        digest = None if current is None else _sha(current)
        if isinstance(step.op, CreateFile):
            if digest == step.op.after:
                os.unlink(step.absolute)
                _fsync_dir(os.path.dirname(step.absolute))
            continue
        expected_now = None if isinstance(step.op, DeleteFile) else step.op.after
        if digest == expected_now and step.preimage is not None:
            _atomic_write(step.absolute, step.preimage, step.mode)
        elif digest != step.op.before:
            _log(f"{step.op.path} changed during the failed write; left as it is.")
    for directory in reversed(created):
        try:
            os.rmdir(_absolute(root, directory))
        except OSError:
            continue
        _fsync_dir(os.path.dirname(_absolute(root, directory)))


def apply_plan(
    root: str,
    real_root: str,
    plan: Plan,
    record: JournalRecord,
    *,
    objects: Mapping[str, bytes] | None = None,
    fault: FaultHook | None = None,
    prune: Sequence[str] = (),
) -> JournalRecord:
    """Apply `plan` through the journal (spec 03 §14.5); the caller holds the lock.

    `record` is appended once every file is swapped, with the directories the apply created
    as its `dirs`; the record appended is returned. `objects` (large intent strings) are
    stored with the pre-images. `prune` (undo: the `dirs` of the record it undoes) names
    directories to remove, deepest first, when the plan leaves them empty — part of the same
    write, rolled back with it. Raises `changed-on-disk`, `path-symlink`, `apply-failed` or
    `rollback-failed` refusals; on any of them no file differs from its pre-image (except
    under `rollback-failed`, where the kept WAL entry is rolled back by the next start).
    """
    hook = _faults(fault)

    def at(point: str) -> None:
        if hook is not None:
            hook(point)

    # 1. Preconditions, before anything is written.
    steps: list[_Step] = []
    for op in plan.ops:
        absolute = _absolute(root, op.path)
        _check_not_through_symlink(absolute, real_root, op.path)
        try:
            current = _read_current(absolute)
        except _SymlinkTarget:
            raise refuse(
                "path-symlink", f"Path leads outside the bank through a symbolic link: {op.path}"
            ) from None
        except _NotRegular:
            raise changed_on_disk(op.path) from None
        if isinstance(op, CreateFile):
            if current.content is not None:
                raise changed_on_disk(op.path)
        elif current.content is None or _sha(current.content) != op.before:
            raise changed_on_disk(op.path)
        steps.append(_Step(op, absolute, current.content, current.mode))

    # 2. Pre-images (and large intent strings) into objects/.
    for step in steps:
        if step.preimage is not None:
            store_object(root, step.preimage)
    for content in (objects or {}).values():
        store_object(root, content)

    # 3. Directories to create, which op creates each, and which directories each op's swap
    # must make durable.
    dirs = _directories_to_create(root, plan)
    created_at: list[list[str]] = []
    claimed: set[str] = set()
    for step in steps:
        mine = [
            new_dir
            for new_dir in dirs
            if new_dir not in claimed and (step.op.path + "/").startswith(new_dir + "/")
        ]
        claimed.update(mine)
        created_at.append(mine)
    syncs = _directory_syncs(steps, created_at, root)
    pruned = _prune_candidates(root, prune)
    if dirs:
        record = msgspec.structs.replace(record, dirs=dirs)

    entry = WalEntry(
        id=record.id,
        tool=record.tool,
        time=record.time,
        ops=tuple(
            WalOp(s.op.path, s.op.kind, s.op.before, s.op.after, s.preimage, s.mode) for s in steps
        ),
        dirs=dirs,
        pruned=pruned,
    )
    wal_file = os.path.join(wal_dir(root), f"{record.id}.json")
    created: list[str] = []
    temps: list[str] = []
    removed: list[WalDir] = []
    journal_file = journal_path(root)
    journal_size: int | None = None
    try:
        # 4. The write-ahead entry.
        descriptor = os.open(wal_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            _write_all(descriptor, msgspec.json.encode(entry))
            at("wal-written")
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        _fsync_dir(wal_dir(root))
        at("wal-synced")

        # 5. Swap each file.
        #
        # Directory fsyncs are batched: each directory a swap (or a mkdir) touched is fsynced
        # once, after the last op that touches it, instead of after every op as §14.5 step 5
        # reads ("…`os.replace` it onto the target, fsync the directory"). Safe because the
        # WAL entry, with every pre-image, is durable before the first swap, and the record is
        # appended only after every directory is fsynced: a crash (or power loss) before the
        # append finds the entry and rolls back whatever mix of swaps reached the disk — each
        # op independently is "after" (restored), "before" (left) or absent (created: nothing
        # to remove) — and a durable record implies durable swaps. Temp files are still
        # fsynced before their rename, so a swap that reached the disk has its bytes. The
        # `op-<i>-dirsynced` boundary still follows every op: it marks "every directory op
        # <i> needs durable is durable, or will be by a later op's sync".
        for number, step in enumerate(steps, start=1):
            op = step.op
            directory = os.path.dirname(step.absolute)
            for new_dir in created_at[number - 1]:
                os.mkdir(_absolute(root, new_dir))
                created.append(new_dir)
            temp: str | None = None
            if op.content is not None:
                try:
                    temp = _write_temp(directory, op.content, step.mode)
                except OSError as exc:
                    # Name the target, not the random temp file, in the refusal.
                    raise OSError(exc.errno, exc.strerror, step.absolute) from exc
                temps.append(temp)
            at(f"op-{number}-temp")
            _check_not_through_symlink(step.absolute, real_root, op.path)
            try:
                now = _read_current(step.absolute).content
            except (_SymlinkTarget, _NotRegular):
                raise changed_on_disk(op.path) from None
            if isinstance(op, CreateFile):
                if now is not None:
                    raise changed_on_disk(op.path)
            elif now is None or _sha(now) != op.before:
                raise changed_on_disk(op.path)
            if temp is not None:
                os.replace(temp, step.absolute)
                temps.remove(temp)
            else:
                os.unlink(step.absolute)
            step.swapped = True
            at(f"op-{number}-swapped")
            for synced in syncs[number - 1]:
                _fsync_dir(synced)
            at(f"op-{number}-dirsynced")

        # 5b. Directories to prune that the deletes left empty (undo: those the undone write
        # created), removed deepest first under the same WAL entry, which lists them with
        # their bits so that a rollback or a recovery re-creates them before restoring the
        # files that lived in them.
        if pruned:
            for candidate in pruned:
                try:
                    os.rmdir(_absolute(root, candidate.path))
                except OSError:
                    continue  # not empty (or gone): it stays as it is
                removed.append(candidate)
            parents = {os.path.dirname(_absolute(root, item.path)) for item in removed}
            for parent in sorted(parents, key=lambda path: path.count(os.sep), reverse=True):
                if os.path.isdir(parent):
                    _fsync_dir(parent)

        # 6. The record.
        line = msgspec.json.encode(record) + b"\n"
        descriptor = os.open(
            journal_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644
        )
        try:
            journal_size = os.fstat(descriptor).st_size
            if hook is not None:
                # Written in two halves only when faults are being injected, so that a crash
                # can be placed between them (`journal-partial`).
                half = len(line) // 2
                _write_all(descriptor, line[:half])
                os.fsync(descriptor)
                at("journal-partial")
                _write_all(descriptor, line[half:])
            else:
                _write_all(descriptor, line)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except BaseException as exc:
        if journal_size is not None:
            try:
                os.truncate(journal_file, journal_size)
            except OSError as truncate_error:  # pragma: no cover - reported below
                _log(f"could not truncate the journal after a failed write: {truncate_error}")
        try:
            _roll_back(root, steps, created, temps, removed)
        except BaseException as restore_error:
            raise refuse(
                "rollback-failed",
                f"The write failed ({_error_text(exc, root)}) and restoring failed too "
                f"({_error_text(restore_error, root)}); .mbank/wal/{record.id}.json was kept so "
                "that the next start rolls it back.",
            ) from exc
        _unlink_quietly(wal_file)
        _fsync_dir(wal_dir(root))
        if not isinstance(exc, Exception):
            raise
        if isinstance(exc, RefusalError):
            raise
        raise refuse(
            "apply-failed",
            f"The write failed ({_error_text(exc, root)}); every file was restored and nothing "
            "was written.",
        ) from exc

    # 7. The write is committed: what remains is housekeeping a later recovery also does.
    try:
        at("journal-appended")
    except Exception as exc:
        _log(f"after the record of {record.id} was appended: {exc}")
    try:
        # No fsync of `wal/` after the unlink, though §14.5 step 7 says "fsync `wal/`": the
        # record is durable already, so an entry that a power loss resurrects carries an id
        # the journal holds, and recovery step 3 (§14.6) just deletes it — nothing is rolled
        # back. The fsync would only make that deletion happen sooner.
        os.unlink(wal_file)
        at("wal-removed")
    except Exception as exc:
        _log(f"could not remove .mbank/wal/{record.id}.json ({exc}); the next write removes it.")
    return record


# --------------------------------------------------------------------------------------------
# Recovery (spec 03 §14.6)
# --------------------------------------------------------------------------------------------


def _truncate_partial_line(root: str) -> None:
    path = journal_path(root)
    try:
        data = _journal_bytes(root)
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
            _unlink_quietly(os.path.join(directory, name))


def _roll_back_entry(root: str, entry: WalEntry) -> None:
    _recreate_dirs(root, entry.pruned)
    for op in reversed(entry.ops):
        absolute = _absolute(root, op.path)
        try:
            current = _read_current(absolute)
        except (_SymlinkTarget, _NotRegular):
            _log(f"{op.path} changed after the interrupted write {entry.id}; left as it is.")
            continue
        digest = None if current.content is None else _sha(current.content)
        if op.kind == "create":
            if digest is not None and digest == op.after:
                os.unlink(absolute)
                _fsync_dir(os.path.dirname(absolute))
            elif digest is not None:
                _log(f"{op.path} changed after the interrupted write {entry.id}; left as it is.")
            continue
        written = digest is None if op.kind == "delete" else digest == op.after
        if written and digest != op.before:
            preimage = op.preimage
            if preimage is None and op.before is not None:
                preimage = read_object(root, op.before)
            if preimage is None:
                _log(f"{op.path}: the pre-image of the interrupted write {entry.id} is lost.")
                continue
            mode = op.mode if op.mode is not None else current.mode
            _atomic_write(absolute, preimage, mode)
        elif digest != op.before:
            _log(f"{op.path} changed after the interrupted write {entry.id}; left as it is.")
    for directory in {os.path.dirname(_absolute(root, op.path)) for op in entry.ops}:
        _remove_stray_temps(directory)
    for directory in sorted(entry.dirs, key=lambda path: path.count("/"), reverse=True):
        absolute = _absolute(root, directory)
        try:
            os.rmdir(absolute)
        except OSError:
            continue
        _fsync_dir(os.path.dirname(absolute))


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
    committed = {record.id for record in parse_records(_journal_bytes(root))}
    rolled_back: list[str] = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as handle:
                entry = msgspec.json.decode(handle.read(), type=WalEntry)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            _unlink_quietly(path)
            _fsync_dir(directory)
            continue
        if entry.id in committed:
            _unlink_quietly(path)
            _fsync_dir(directory)
            continue
        _roll_back_entry(root, entry)
        _unlink_quietly(path)
        _fsync_dir(directory)
        _log(f"rolled back an interrupted write ({entry.id}, {entry.tool}).")
        rolled_back.append(entry.id)
    return rolled_back


def recover_at_start(root: str, *, timeout: float = LOCK_TIMEOUT) -> list[str]:
    """Server start: when `.mbank/` exists, take the lock and roll back interrupted writes."""
    if not has_journal_dir(root):
        return []
    with bank_lock(root, "recover", timeout=timeout):
        return recover(root)


# --------------------------------------------------------------------------------------------
# History, the journal resource, "where did it go", stats
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Undo: the outside facts its planner needs (spec 03 §14.10)
# --------------------------------------------------------------------------------------------


def current_hashes(root: str, paths: Sequence[str]) -> dict[str, str | None]:
    """The sha256 of each bank path's bytes now, None when nothing is there.

    A symbolic link or a non-file at the path gets a marker that matches no hash.
    """
    hashes: dict[str, str | None] = {}
    for path in paths:
        try:
            content = _read_current(_absolute(root, path)).content
        except (_SymlinkTarget, _NotRegular):
            hashes[path] = "not-a-regular-file"
            continue
        hashes[path] = None if content is None else _sha(content)
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


def encode_preimage(content: bytes) -> str:
    """Base64 text of a pre-image, as a WAL entry carries it."""
    return base64.b64encode(content).decode("ascii")


def created_dirs(root: str, record_id: str) -> tuple[str, ...]:
    """The directories the journal record `record_id` says its write created (none if unknown)."""
    for record in reversed(read_records(root)):
        if record.id == record_id:
            return record.dirs
    return ()
