"""Applying a plan through the journal: the numbered steps of spec 03 §14.5.

`apply_plan` runs them in order, each a function here: 1 `check_preconditions`, 2
`store_preimages`, 3 `plan_directories`, 4 `write_wal_entry`, 5 `swap_files` (and
`prune_directories`), 6 `append_record`, 7 `remove_wal_entry`; step 8 (refresh the snapshot)
is the caller's. Any failure in 4–6 goes to `restore_and_refuse`. The precondition of §14.7
is one function, `verified_current`, run for every op before the first swap and again right
before each swap.
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field

import msgspec

from mbank.journal import durable
from mbank.journal.confine import leads_outside, stored_path_problem
from mbank.journal.durable import Current, NotRegular, SymlinkTarget
from mbank.journal.layout import (
    JOURNAL_FILE,
    MBANK_DIR,
    TEMP_SUFFIX,
    WAL_DIR,
    bank_absolute,
    log,
)
from mbank.journal.objects import store_object
from mbank.journal.tree import BadEntry, open_directory, open_file, open_mbank
from mbank.journal.wal import WalDir, WalEntry, WalOp, recreate_dirs
from mbank.model import AnyFileOp, CreateFile, DeleteFile, JournalRecord, Plan, RefusalError
from mbank.paths import refuse
from mbank.plan import sha256_hex

FaultHook = Callable[[str], None]


def changed_on_disk(bank_path: str) -> RefusalError:
    """The precondition refusal of spec 03 §14.7."""
    return refuse(
        "changed-on-disk",
        f"{bank_path} changed on disk by someone else since it was read; nothing was written.",
    )


def _path_symlink(bank_path: str) -> RefusalError:
    return refuse(
        "path-symlink", f"Path leads outside the bank through a symbolic link: {bank_path}"
    )


def _check_confined(root: str, real_root: str, bank_path: str) -> None:
    """Refuse a path a write may not touch: one not in a bank path's normal form (an undo of
    a hand-edited record, say: `path-outside`), or one whose target, or deepest existing
    ancestor, leaves the bank through a symbolic link (`path-symlink`)."""
    if stored_path_problem(bank_path, root, real_root) is not None:
        raise refuse("path-outside", f"Path must stay inside the bank: {bank_path}")
    if leads_outside(root, real_root, bank_path):
        raise _path_symlink(bank_path)


def verified_current(root: str, real_root: str, op: AnyFileOp, absolute: str) -> Current:
    """The file at `absolute` now, once it is shown to be what `op` expects (§14.7).

    A create expects nothing there; a replace or delete expects bytes whose sha256 is
    `op.before`. Anything else refuses `changed-on-disk`; a path through a symbolic link
    refuses `path-symlink`.
    """
    _check_confined(root, real_root, op.path)
    try:
        current = durable.read_current(absolute)
    except SymlinkTarget:
        raise _path_symlink(op.path) from None
    except NotRegular:
        raise changed_on_disk(op.path) from None
    if isinstance(op, CreateFile):
        if current.content is not None:
            raise changed_on_disk(op.path)
    elif current.content is None or sha256_hex(current.content) != op.before:
        raise changed_on_disk(op.path)
    return current


def refuse_read_only(bank_path: str, absolute: str, mode: int | None) -> None:
    """`document-read-only`: a write would replace or delete a file a person made read-only.

    The swap renames over the file, which the file's own bits never stop, so they are asked
    here (issue 13 item 14): no write bit at all (0444, which root would ignore too), or none
    this user holds.
    """
    if mode is None:
        return
    if mode & 0o222 and os.access(absolute, os.W_OK, follow_symlinks=False):
        return
    raise refuse(
        "document-read-only",
        f"{bank_path} is read-only on disk (mode {mode:04o}); make it writable (chmod u+w) "
        "if it should change; nothing was written.",
    )


@dataclass
class _Step:
    """One op being applied, with what its rollback needs and what its swap must do."""

    op: AnyFileOp
    absolute: str
    preimage: bytes | None
    mode: int | None
    creates: list[str] = field(default_factory=list)  # directories made before the swap
    syncs: list[str] = field(default_factory=list)  # directories fsynced after the swap
    swapped: bool = False


@dataclass
class _Progress:
    """What an apply has put on disk so far: what `restore_and_refuse` takes back.

    `base` and `wal` are the descriptors of `.mbank/` and `.mbank/wal/` the apply works in.
    """

    base: int
    wal: int
    created: list[str] = field(default_factory=list)
    temps: list[str] = field(default_factory=list)
    removed: list[WalDir] = field(default_factory=list)
    journal_size: int | None = None


# --------------------------------------------------------------------------------------------
# Steps 1-3: nothing is written yet, except pre-images into objects/
# --------------------------------------------------------------------------------------------


def check_preconditions(root: str, real_root: str, plan: Plan) -> list[_Step]:
    """Step 1: every op's file is as the plan expects, before anything is written."""
    steps: list[_Step] = []
    for op in plan.ops:
        absolute = bank_absolute(root, op.path)
        current = verified_current(root, real_root, op, absolute)
        if not isinstance(op, CreateFile):
            refuse_read_only(op.path, absolute, current.mode)
        steps.append(_Step(op, absolute, current.content, current.mode))
    return steps


def store_preimages(root: str, steps: Sequence[_Step], objects: Mapping[str, bytes]) -> None:
    """Step 2: the pre-images (and large intent strings) into `objects/`."""
    for step in steps:
        if step.preimage is not None:
            store_object(root, step.preimage)
    for content in objects.values():
        store_object(root, content)


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
            if not os.path.lexists(bank_absolute(root, directory)):
                missing.append(directory)
    return tuple(sorted(missing, key=lambda path: (path.count("/"), missing.index(path))))


def plan_directories(root: str, plan: Plan, steps: Sequence[_Step]) -> tuple[str, ...]:
    """Step 3: the directories to create, which op creates each, what each swap fsyncs.

    Returns the directories to create (shallowest first) and fills each step's `creates`
    and `syncs`. Op *i* needs its target's directory and the parent of every directory it
    created made durable; each such directory is fsynced after the LAST op that needs it,
    not after every op (§14.5 step 5 says "fsync the directory" per op; see `swap_files`
    for why once is enough).
    """
    dirs = _directories_to_create(root, plan)
    claimed: set[str] = set()
    last: dict[str, int] = {}
    for number, step in enumerate(steps):
        step.creates = [
            new_dir
            for new_dir in dirs
            if new_dir not in claimed and (step.op.path + "/").startswith(new_dir + "/")
        ]
        claimed.update(step.creates)
        needed = [os.path.dirname(step.absolute)]
        needed.extend(os.path.dirname(bank_absolute(root, new_dir)) for new_dir in step.creates)
        for directory in needed:
            last[directory] = number
    for directory, number in last.items():
        steps[number].syncs.append(directory)
    # Deepest first: a new directory's own entries before its entry in the parent.
    for step in steps:
        step.syncs.sort(key=lambda path: path.count(os.sep), reverse=True)
    return dirs


def _prune_candidates(root: str, prune: Sequence[str]) -> tuple[WalDir, ...]:
    """The directories of `prune` that are real directories now, deepest first, with bits.

    A symlinked directory, a missing one, or a path that is not a bank path inside the bank
    (the list comes from a journal record, which may be hand-edited) is never a candidate; the
    bits are kept so that a rollback re-creates a removed directory exactly.
    """
    found: dict[str, int] = {}
    real_root = os.path.realpath(root)
    for directory in prune:
        if not directory or directory in found:
            continue
        if stored_path_problem(directory, root, real_root) or leads_outside(
            root, real_root, directory
        ):
            continue  # read from a journal record: never a directory outside the bank
        try:
            info = os.lstat(bank_absolute(root, directory))
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            found[directory] = stat.S_IMODE(info.st_mode)
    ordered = sorted(found, key=lambda path: path.count("/"), reverse=True)
    return tuple(WalDir(path, found[path]) for path in ordered)


# --------------------------------------------------------------------------------------------
# Steps 4-7: under the write-ahead entry
# --------------------------------------------------------------------------------------------


def write_wal_entry(wal: int, entry: WalEntry, at: FaultHook) -> None:
    """Step 4: the write-ahead entry, fsynced with its directory before the first swap.

    It is written under a temp name and renamed into place once fsynced, so that an
    `<id>.json` that does not parse was damaged after the fact, never cut short by a crash
    while it was written: recovery never takes a damaged entry for "nothing swapped yet".
    """
    name = f"{entry.id}.json"
    temp = durable.write_temp_at(
        wal,
        msgspec.json.encode(entry),
        0o644,
        name=f".{name}{TEMP_SUFFIX}",
        written=lambda: at("wal-written"),
    )
    os.rename(temp, name, src_dir_fd=wal, dst_dir_fd=wal)
    os.fsync(wal)
    at("wal-synced")


def _swap_one(
    root: str, real_root: str, number: int, step: _Step, progress: _Progress, at: FaultHook
) -> None:
    op = step.op
    for new_dir in step.creates:
        os.mkdir(bank_absolute(root, new_dir))
        progress.created.append(new_dir)
    temp: str | None = None
    if op.content is not None:
        try:
            temp = durable.write_temp(os.path.dirname(step.absolute), op.content, step.mode)
        except OSError as exc:
            # Name the target, not the random temp file, in the refusal.
            raise OSError(exc.errno, exc.strerror, step.absolute) from exc
        progress.temps.append(temp)
    at(f"op-{number}-temp")
    verified_current(root, real_root, op, step.absolute)
    if temp is not None:
        os.replace(temp, step.absolute)
        progress.temps.remove(temp)
    else:
        os.unlink(step.absolute)
    step.swapped = True
    at(f"op-{number}-swapped")
    for synced in step.syncs:
        durable.fsync_dir(synced)
    at(f"op-{number}-dirsynced")


def swap_files(
    root: str, real_root: str, steps: Sequence[_Step], progress: _Progress, at: FaultHook
) -> None:
    """Step 5: swap each file, in plan order, re-checking its precondition right before.

    Directory fsyncs are batched: each directory a swap (or a mkdir) touched is fsynced once,
    after the last op that touches it, instead of after every op as §14.5 step 5 reads
    ("…`os.replace` it onto the target, fsync the directory"). Safe because the WAL entry,
    with every pre-image, is durable before the first swap, and the record is appended only
    after every directory is fsynced: a crash (or power loss) before the append finds the
    entry and rolls back whatever mix of swaps reached the disk — each op independently is
    "after" (restored), "before" (left) or absent (created: nothing to remove) — and a
    durable record implies durable swaps. Temp files are still fsynced before their rename,
    so a swap that reached the disk has its bytes. The `op-<i>-dirsynced` boundary still
    follows every op: it marks "every directory op <i> needs durable is durable, or will be
    by a later op's sync".
    """
    for number, step in enumerate(steps, start=1):
        _swap_one(root, real_root, number, step, progress, at)


def prune_directories(root: str, pruned: Sequence[WalDir], progress: _Progress) -> None:
    """Step 5b: remove the directories to prune that the deletes left empty, deepest first.

    Undo prunes those the undone write created. The WAL entry lists them with their bits, so
    a rollback or a recovery re-creates them before restoring the files that lived in them.
    """
    for candidate in pruned:
        try:
            os.rmdir(bank_absolute(root, candidate.path))
        except OSError:
            continue  # not empty (or gone): it stays as it is
        progress.removed.append(candidate)
    parents = {os.path.dirname(bank_absolute(root, item.path)) for item in progress.removed}
    for parent in sorted(parents, key=lambda path: path.count(os.sep), reverse=True):
        if os.path.isdir(parent):
            durable.fsync_dir(parent)


def append_record(
    base: int, record: JournalRecord, progress: _Progress, at: FaultHook, *, halves: bool
) -> None:
    """Step 6: the record, one `O_APPEND` write and an fsync, always on a line of its own.

    A journal whose last line has no newline (a crash, a bad merge, a hand edit) gets one
    first, in the same write: otherwise the record would run on into that line and no
    reader would see it. Written in two halves only when faults are being injected
    (`halves`), so that a crash can be placed between them (`journal-partial`).
    """
    line = msgspec.json.encode(record) + b"\n"
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
    descriptor = open_file(base, JOURNAL_FILE, f"{MBANK_DIR}/{JOURNAL_FILE}", flags)
    try:
        size = os.fstat(descriptor).st_size
        progress.journal_size = size
        if size and os.pread(descriptor, 1, size - 1) != b"\n":
            line = b"\n" + line
        if halves:
            half = len(line) // 2
            durable.write_all(descriptor, line[:half])
            os.fsync(descriptor)
            at("journal-partial")
            durable.write_all(descriptor, line[half:])
        else:
            durable.write_all(descriptor, line)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_wal_entry(record: JournalRecord, wal: int, at: FaultHook) -> None:
    """Step 7: the write is committed; what remains is housekeeping a recovery also does.

    No fsync of `wal/` after the unlink, though §14.5 step 7 says "fsync `wal/`": the record
    is durable already, so an entry that a power loss resurrects carries an id the journal
    holds, and recovery step 3 (§14.6) just deletes it — nothing is rolled back. The fsync
    would only make that deletion happen sooner.
    """
    try:
        at("journal-appended")
    except Exception as exc:
        log(f"after the record of {record.id} was appended: {exc}")
    try:
        os.unlink(f"{record.id}.json", dir_fd=wal)
        at("wal-removed")
    except Exception as exc:
        log(f"could not remove .mbank/wal/{record.id}.json ({exc}); the next write removes it.")


# --------------------------------------------------------------------------------------------
# Failure: restore the pre-images, then refuse
# --------------------------------------------------------------------------------------------


def error_text(exc: BaseException, root: str) -> str:
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


def roll_back(
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
        durable.unlink_quietly(temp)
    recreate_dirs(root, removed)
    for step in reversed(steps):
        if not step.swapped:
            continue
        current = durable.read_current(step.absolute).content
        digest = None if current is None else sha256_hex(current)
        if isinstance(step.op, CreateFile):
            if digest == step.op.after:
                os.unlink(step.absolute)
                durable.fsync_dir(os.path.dirname(step.absolute))
            continue
        expected_now = None if isinstance(step.op, DeleteFile) else step.op.after
        if digest == expected_now and step.preimage is not None:
            durable.atomic_write(step.absolute, step.preimage, step.mode)
        elif digest != step.op.before:
            log(f"{step.op.path} changed during the failed write; left as it is.")
    for directory in reversed(created):
        try:
            os.rmdir(bank_absolute(root, directory))
        except OSError:
            continue
        durable.fsync_dir(os.path.dirname(bank_absolute(root, directory)))


def restore_and_refuse(
    root: str,
    record: JournalRecord,
    exc: BaseException,
    steps: Sequence[_Step],
    progress: _Progress,
) -> RefusalError | None:
    """Take back everything steps 4–6 did, then the refusal to raise (None: re-raise `exc`).

    A journal append cut short is truncated away; a failed restore keeps the WAL entry, so
    the next start rolls it back (`rollback-failed`).
    """
    if progress.journal_size is not None:
        try:
            descriptor = open_file(
                progress.base, JOURNAL_FILE, f"{MBANK_DIR}/{JOURNAL_FILE}", os.O_WRONLY
            )
            try:
                os.ftruncate(descriptor, progress.journal_size)
            finally:
                os.close(descriptor)
        except (OSError, BadEntry) as truncate_error:  # pragma: no cover - reported below
            log(f"could not truncate the journal after a failed write: {truncate_error}")
    try:
        roll_back(root, steps, progress.created, progress.temps, progress.removed)
    except BaseException as restore_error:
        return refuse(
            "rollback-failed",
            f"The write failed ({error_text(exc, root)}) and restoring failed too "
            f"({error_text(restore_error, root)}); .mbank/wal/{record.id}.json was kept so "
            "that the next start rolls it back.",
        )
    for name in (f"{record.id}.json", f".{record.id}.json{TEMP_SUFFIX}"):
        with suppress(FileNotFoundError):
            os.unlink(name, dir_fd=progress.wal)
    os.fsync(progress.wal)
    if not isinstance(exc, Exception) or isinstance(exc, RefusalError):
        return None
    return refuse(
        "apply-failed",
        f"The write failed ({error_text(exc, root)}); every file was restored and nothing "
        "was written.",
    )


# --------------------------------------------------------------------------------------------
# The whole apply
# --------------------------------------------------------------------------------------------


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
    steps = check_preconditions(root, real_root, plan)
    with ExitStack() as stack:
        try:
            base = open_mbank(root)
            stack.callback(os.close, base)
            wal = open_directory(base, WAL_DIR, f"{MBANK_DIR}/{WAL_DIR}")
            stack.callback(os.close, wal)
            store_preimages(root, steps, objects or {})
        except BadEntry as bad:
            raise bad.refusal() from None
        except OSError as exc:
            raise refuse(
                "apply-failed",
                f"The write failed ({error_text(exc, root)}); every file was restored and "
                "nothing was written.",
            ) from exc
        return _apply_under_wal(root, real_root, plan, record, steps, prune, base, wal, hook)


def _apply_under_wal(
    root: str,
    real_root: str,
    plan: Plan,
    record: JournalRecord,
    steps: list[_Step],
    prune: Sequence[str],
    base: int,
    wal: int,
    hook: FaultHook | None,
) -> JournalRecord:
    """Steps 3–7 of `apply_plan`, in the open `.mbank/` (`base`) and `.mbank/wal/` (`wal`)."""

    def at(point: str) -> None:
        if hook is not None:
            hook(point)

    dirs = plan_directories(root, plan, steps)
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
    progress = _Progress(base=base, wal=wal)
    try:
        write_wal_entry(wal, entry, at)
        swap_files(root, real_root, steps, progress, at)
        if pruned:
            prune_directories(root, pruned, progress)
        append_record(base, record, progress, at, halves=hook is not None)
    except BaseException as exc:
        refusal = restore_and_refuse(root, record, exc, steps, progress)
        if refusal is None:
            raise
        raise refusal from exc
    remove_wal_entry(record, wal, at)
    return record
