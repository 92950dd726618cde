"""`.mbank/` itself and the advisory lock every real write holds (spec 03 §14.1, §14.4)."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from mbank.journal import durable
from mbank.journal.layout import (
    DIRECTORY_MODE,
    GITIGNORE_FILE,
    GITIGNORE_TEXT,
    LOCK_FILE,
    LOCK_INTERVAL,
    LOCK_TIMEOUT,
    OBJECTS_DIR,
    WAL_DIR,
    journal_dir,
)
from mbank.paths import refuse

LOCK_BUSY = (
    "Another write to this bank is in progress (.mbank/lock is held); nothing was written. "
    "Try again."
)


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
                durable.write_all(descriptor, GITIGNORE_TEXT.encode("ascii"))
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            created = True
    if created:
        durable.fsync_dir(base)
        durable.fsync_dir(root)


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
