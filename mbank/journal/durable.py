"""Small durable-IO primitives the apply, the objects and the recovery share (spec 03 §14.5).

Every file mbank writes into a bank goes through `write_temp` + `os.replace` + `fsync_dir`, so
that a crash leaves either the old bytes or the new ones. Other modules call these through
the module (`durable.write_all`), so a test can stand a failing disk in for one of them.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from contextlib import suppress

import msgspec

from mbank.journal.layout import TEMP_PREFIX, TEMP_SUFFIX


def fsync_dir(directory: str) -> None:
    """Make the entries of `directory` durable (a rename or unlink in it survives a crash)."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_all(descriptor: int, data: bytes) -> None:
    """Write every byte of `data` (`os.write` may write fewer than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


def unlink_quietly(path: str) -> None:
    """Remove `path`; nothing there is not an error."""
    with suppress(FileNotFoundError):
        os.unlink(path)


def write_temp(directory: str, content: bytes, mode: int | None) -> str:
    """A fsynced hidden temp file in `directory` holding `content`; returns its path.

    New files get `0o666` minus the umask (the kernel applies it); `mode` sets other bits.
    """
    name = os.path.join(directory, f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}")
    descriptor = os.open(
        name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666
    )
    try:
        write_all(descriptor, content)
        if mode is not None:
            os.fchmod(descriptor, mode)
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        unlink_quietly(name)
        raise
    os.close(descriptor)
    return name


def write_temp_at(
    dir_fd: int,
    content: bytes,
    mode: int,
    *,
    name: str | None = None,
    written: Callable[[], None] | None = None,
) -> str:
    """A fsynced temp file in the directory `dir_fd` holding `content`; returns its name.

    For `.mbank/` itself, where every name is opened relative to a directory descriptor.
    `written` runs between the write and the fsync (the WAL entry's fault point).
    """
    temp = name or f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(temp, flags, mode, dir_fd=dir_fd)
    try:
        write_all(descriptor, content)
        if written is not None:
            written()
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        with suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    os.close(descriptor)
    return temp


def atomic_write(target: str, content: bytes, mode: int | None) -> None:
    """Replace `target` with `content` through a temp file in its directory, durably."""
    directory = os.path.dirname(target)
    temp = write_temp(directory, content, mode)
    try:
        os.replace(temp, target)
    except BaseException:
        unlink_quietly(temp)
        raise
    fsync_dir(directory)


class NotRegular(Exception):
    """The path names something other than a regular file (a directory, a FIFO, …)."""


class SymlinkTarget(Exception):
    """The path is a symbolic link (dangling or not)."""


class Current(msgspec.Struct, frozen=True):
    """A bank file as it is now: its bytes and permission bits, both None when absent."""

    content: bytes | None
    mode: int | None


def read_current(absolute: str) -> Current:
    """The bytes and permission bits at `absolute` now; content None when nothing is there.

    Raises `SymlinkTarget` for a link and `NotRegular` for a non-file: neither is read.
    """
    try:
        descriptor = os.open(absolute, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if os.path.lexists(absolute):  # a dangling symlink
            raise SymlinkTarget(absolute) from None
        return Current(None, None)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkTarget(absolute) from exc
        raise
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(absolute)
        chunks: list[bytes] = []
        while True:
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return Current(b"".join(chunks), stat.S_IMODE(info.st_mode))
    finally:
        os.close(descriptor)
