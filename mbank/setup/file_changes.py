"""The files a `mbank setup` target changes: each one's text before and after, shown or written.

Every target (git, each client) first plans all its changes — every file read and checked
before any is written — then either prints their diff (`--dry-run`) or writes them. The
planning is the target's; showing and writing are the same for all and live here.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable, Sequence

import msgspec


class FileChange(msgspec.Struct, frozen=True):
    """One file's text before and after; `label` names it in the output."""

    path: str
    label: str
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def read_text(path: str) -> str | None:
    """A file's text as it is (line ends kept), or None when there is no such file."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def change_diff(change: FileChange) -> str:
    """The unified diff of one change, every line ending in a newline."""
    before = (change.before or "").splitlines(keepends=True)
    after = change.after.splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, f"a/{change.label}", f"b/{change.label}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def write_text(path: str, text: str, *, executable: bool = False) -> None:
    """Replace `path` atomically with `text`, keeping its mode (plus x when `executable`)."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".mbank-", suffix=".tmp", dir=directory)
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
        stream.write(text)
    mode = 0o755 if executable else 0o644
    if os.path.exists(path):
        mode = os.stat(path).st_mode & 0o777 | (0o111 if executable else 0)
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def show_or_write(
    changes: Sequence[FileChange],
    *,
    dry_run: bool,
    apply: Callable[[FileChange], str],
    unchanged: str,
) -> list[str]:
    """The output lines of a setup target: each changed file's diff (`dry_run`) or the line
    `apply` returns once it has written it; `unchanged` when no file changes."""
    out: list[str] = []
    for change in changes:
        if change.changed:
            out.append(change_diff(change) if dry_run else apply(change))
    if not any(change.changed for change in changes):
        out.append(unchanged)
    elif dry_run:
        out.append("(dry run: nothing was written)\n")
    return out
