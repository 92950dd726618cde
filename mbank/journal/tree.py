"""The `.mbank/` tree, opened without following a single link (spec 03 §14.1).

A cloned repository's `.mbank/` is hostile input: any name in it may be a symbolic link to a
file outside the bank, a directory where a file belongs, or a file where a directory belongs.
So everything under `.mbank/` is opened relative to a directory descriptor with `O_NOFOLLOW`
(and `O_NONBLOCK` for reads, so a FIFO cannot hang a reader), and checked for its kind after
the open; `.mbank/` itself must be a real directory inside the bank. A name of the wrong kind
raises `BadEntry`, which a write turns into a one-sentence refusal and a read into a note on
stderr.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from mbank.journal.layout import DIRECTORY_MODE, MBANK_DIR, log
from mbank.model import RefusalError
from mbank.paths import refuse

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_ONLY_ERRORS = (errno.EACCES, errno.EPERM, errno.EROFS)


class BadEntry(Exception):
    """A name under `.mbank/` that is not of the kind mbank keeps there."""

    def __init__(self, name: str, found: str, wanted: str) -> None:
        super().__init__(f"{name} is {found}, not {wanted}")
        self.name = name
        self.found = found
        self.wanted = wanted

    def refusal(self) -> RefusalError:
        """The refusal a write answers with (`journal-entry-bad`)."""
        return refuse(
            "journal-entry-bad",
            f"{self.name} is {self.found}, not {self.wanted} as mbank keeps it; move it aside "
            "(or delete it) and try again; nothing was written.",
        )


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    return "a special file"


def _kind_at(dir_fd: int, name: str) -> str:
    try:
        return _kind(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return "something mbank cannot open"


def read_only_refusal(exc: OSError, name: str) -> RefusalError:
    """`bank-read-only`: this user cannot write the bank (a read-only checkout, a mount)."""
    reason = (exc.strerror or "not permitted").lower()
    return refuse(
        "bank-read-only",
        f"This bank cannot be written by this user ({reason}: {name}); reads still work, "
        "and nothing was written.",
    )


def is_read_only_error(exc: OSError) -> bool:
    """True for the errors a read-only bank gives (permission denied, read-only file system)."""
    return exc.errno in _READ_ONLY_ERRORS


def open_directory(dir_fd: int, name: str, shown: str, *, create: bool = False) -> int:
    """A descriptor for the real directory `name` in `dir_fd` (made, mode 0755, if `create`).

    Raises `BadEntry` when `name` is a link, a file or anything but a directory, and
    `FileNotFoundError` when it is missing and not to be made.
    """
    if create:
        try:
            os.mkdir(name, DIRECTORY_MODE, dir_fd=dir_fd)
        except FileExistsError:
            pass
        else:
            os.chmod(name, DIRECTORY_MODE, dir_fd=dir_fd, follow_symlinks=False)
    try:
        return os.open(name, _DIRECTORY, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise BadEntry(shown, _kind_at(dir_fd, name), "a directory") from None
        raise


def open_file(dir_fd: int, name: str, shown: str, flags: int, mode: int = 0o644) -> int:
    """A descriptor for the regular file `name` in `dir_fd`, opened with `flags`, no link followed.

    Raises `BadEntry` for a link, a directory or a special file (closing what it opened).
    """
    try:
        descriptor = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise BadEntry(shown, _kind_at(dir_fd, name), "a file") from None
        raise
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise BadEntry(shown, _kind_at(dir_fd, name), "a file")
    return descriptor


def read_all(descriptor: int) -> bytes:
    """Every byte from `descriptor`'s position to its end."""
    chunks: list[bytes] = []
    while True:
        chunk = os.read(descriptor, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_file(dir_fd: int, name: str, shown: str) -> bytes | None:
    """The bytes of the regular file `name` in `dir_fd`, None when it is missing."""
    try:
        descriptor = open_file(dir_fd, name, shown, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        return read_all(descriptor)
    finally:
        os.close(descriptor)


def open_mbank(root: str, *, create: bool = False) -> int:
    """A descriptor for `<root>/.mbank`, a real directory inside the bank (made if `create`).

    The root itself may be reached through a link (a bank served by a symlinked path); what
    lies under it is not. Raises `BadEntry`, or `FileNotFoundError` when there is none.
    """
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return open_directory(root_fd, MBANK_DIR, MBANK_DIR, create=create)
    finally:
        os.close(root_fd)


@contextmanager
def mbank_for_reading(root: str) -> Iterator[int | None]:
    """`.mbank/`'s descriptor for a reader, None when there is none or it is not usable.

    A reader never fails on what it finds: a `.mbank` of the wrong kind is noted on stderr.
    """
    try:
        descriptor = open_mbank(root)
    except BadEntry as bad:
        log(f"{bad}; the journal is not read.")
        descriptor = None
    except OSError:
        descriptor = None
    try:
        yield descriptor
    finally:
        if descriptor is not None:
            os.close(descriptor)


def read_mbank_file(root: str, *names: str) -> bytes | None:
    """A reader's view of `.mbank/<names…>`: its bytes, None when missing or unusable."""
    shown = "/".join((MBANK_DIR, *names))
    with mbank_for_reading(root) as base:
        if base is None:
            return None
        opened: list[int] = []
        try:
            parent = base
            for directory in names[:-1]:
                parent = open_directory(parent, directory, f"{MBANK_DIR}/{directory}")
                opened.append(parent)
            return read_file(parent, names[-1], shown)
        except BadEntry as bad:
            log(f"{bad}; it is not read.")
            return None
        except OSError:
            return None
        finally:
            for descriptor in opened:
                os.close(descriptor)
