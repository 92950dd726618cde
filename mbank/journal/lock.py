"""`.mbank/` itself and the lock every real write holds (spec 03 §14.1, §14.4).

The lock is an `flock` on the `.mbank/` directory's own descriptor: a directory that holds
the journal cannot be unlinked from under its holder, whatever happens to `.mbank/lock` (a
person removing a "stale" lock, `git clean -fdX`, which removes every ignored file). After
locking, the path `.mbank` must still name the locked inode, or the lock is taken again.
`.mbank/lock` is still locked second (and its `<pid> <tool>` written), so that an older mbank
working on the same bank — which knows only that file — waits too. Neither is touched by a
read or a server start: the lock belongs to the first write.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress

from mbank.journal import durable
from mbank.journal.layout import (
    GITIGNORE_FILE,
    GITIGNORE_TEXT,
    JOURNAL_FILE,
    LOCK_FILE,
    LOCK_INTERVAL,
    LOCK_TIMEOUT,
    MBANK_DIR,
    OBJECTS_DIR,
    QUARANTINE_DIR,
    WAL_DIR,
    journal_dir,
)
from mbank.journal.tree import (
    BadEntry,
    is_read_only_error,
    open_directory,
    open_file,
    open_mbank,
    read_only_refusal,
)
from mbank.model import RefusalError
from mbank.paths import refuse

LOCK_BUSY = (
    "Another write to this bank is in progress (.mbank/lock is held); nothing was written. "
    "Try again."
)


def unusable_tree(exc: OSError, name: str) -> RefusalError:
    """A refusal for an OS error on `.mbank/` before anything was written."""
    if is_read_only_error(exc):
        return read_only_refusal(exc, name)
    reason = (exc.strerror or str(exc)).lower()
    return refuse(
        "journal-unusable",
        f"mbank could not use {name} ({reason}); nothing was written.",
    )


def _write_gitignore(base: int) -> bool:
    try:
        os.stat(GITIGNORE_FILE, dir_fd=base, follow_symlinks=False)
        return False  # never overwritten, whatever it is (§14.1)
    except FileNotFoundError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(GITIGNORE_FILE, flags, 0o644, dir_fd=base)
    except FileExistsError:
        return False
    try:
        durable.write_all(descriptor, GITIGNORE_TEXT.encode("ascii"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return True


def ensure_journal_dir(root: str) -> None:
    """Create `.mbank/` with `wal/` and `objects/` (mode 0755) and its `.gitignore` if missing.

    An existing `.gitignore` is never overwritten (§14.1). Safe when two processes race.
    Refuses (one sentence, nothing written) when a name there is of the wrong kind or the
    bank cannot be written by this user.
    """
    shown = MBANK_DIR
    try:
        existed = os.path.lexists(journal_dir(root))
        with ExitStack() as stack:
            base = open_mbank(root, create=True)
            stack.callback(os.close, base)
            created = not existed
            for name in (WAL_DIR, OBJECTS_DIR):
                shown = f"{MBANK_DIR}/{name}"
                made = not _exists_at(base, name)
                stack.callback(os.close, open_directory(base, name, shown, create=True))
                created = created or made
            shown = f"{MBANK_DIR}/{GITIGNORE_FILE}"
            created = _write_gitignore(base) or created
            if created:
                os.fsync(base)
                durable.fsync_dir(root)
    except BadEntry as bad:
        raise bad.refusal() from None
    except OSError as exc:
        raise unusable_tree(exc, shown) from None


def _exists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def check_tree(base: int) -> None:
    """Refuse (`BadEntry`) when a name mbank keeps in `.mbank/` is of the wrong kind."""
    for name, wanted_dir in (
        (WAL_DIR, True),
        (OBJECTS_DIR, True),
        (QUARANTINE_DIR, True),
        (JOURNAL_FILE, False),
        (LOCK_FILE, False),
    ):
        try:
            mode = os.stat(name, dir_fd=base, follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue
        ok = stat.S_ISDIR(mode) if wanted_dir else stat.S_ISREG(mode)
        if not ok:
            found = (
                "a symbolic link"
                if stat.S_ISLNK(mode)
                else "a directory"
                if stat.S_ISDIR(mode)
                else "a file"
                if stat.S_ISREG(mode)
                else "a special file"
            )
            raise BadEntry(f"{MBANK_DIR}/{name}", found, "a directory" if wanted_dir else "a file")


def _flock(descriptor: int, deadline: float, interval: float) -> None:
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise refuse("lock-busy", LOCK_BUSY) from None
            time.sleep(interval)


def _same_inode(descriptor: int, path: str) -> bool:
    try:
        now = os.lstat(path)
    except OSError:
        return False
    held = os.fstat(descriptor)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _lock_directory(root: str, deadline: float, interval: float) -> int:
    """`.mbank/` opened and flocked, still named `.mbank` once locked; its descriptor."""
    while True:
        base = open_mbank(root)
        try:
            _flock(base, deadline, interval)
            if _same_inode(base, journal_dir(root)):
                return base
        except BaseException:
            os.close(base)
            raise
        os.close(base)  # replaced while we waited: lock the one that is there now


@contextmanager
def bank_lock(
    root: str,
    tool: str,
    *,
    timeout: float = LOCK_TIMEOUT,
    interval: float = LOCK_INTERVAL,
) -> Iterator[None]:
    """Hold the bank's lock (flock, retried every 50 ms up to `timeout` s), or refuse.

    `lock-busy` when another writer holds it past the timeout; `journal-entry-bad` when a
    name in `.mbank/` is of the wrong kind; `bank-read-only` when this user cannot write.
    """
    deadline = time.monotonic() + timeout
    shown = MBANK_DIR
    with ExitStack() as stack:
        try:
            base = _lock_directory(root, deadline, interval)
            stack.callback(os.close, base)
            check_tree(base)
            shown = f"{MBANK_DIR}/{LOCK_FILE}"
            descriptor = open_file(base, LOCK_FILE, shown, os.O_RDWR | os.O_CREAT)
            stack.callback(os.close, descriptor)
            _flock(descriptor, deadline, interval)
            # Informational only: who holds it (§14.4). Written over the old content and
            # cut only when the old content was longer: a truncation costs a metadata
            # change on every write, for a file whose content nobody relies on.
            holder = f"{os.getpid()} {tool}\n".encode()
            os.pwrite(descriptor, holder, 0)
            if os.fstat(descriptor).st_size > len(holder):
                os.ftruncate(descriptor, len(holder))
        except BadEntry as bad:
            raise bad.refusal() from None
        except OSError as exc:
            raise unusable_tree(exc, shown) from None
        yield  # both flocks go with their descriptors, closed on the way out


def lock_is_free(root: str) -> bool:
    """True when nobody holds the bank's lock (for tests and diagnostics); writes nothing."""
    try:
        base = open_mbank(root)
    except (OSError, BadEntry):
        return True
    descriptors = [base]
    try:
        with suppress(OSError, BadEntry):
            shown = f"{MBANK_DIR}/{LOCK_FILE}"
            descriptors.append(open_file(base, LOCK_FILE, shown, os.O_RDONLY | os.O_NONBLOCK))
        for descriptor in descriptors:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
        return True
    finally:
        for descriptor in descriptors:
            os.close(descriptor)
