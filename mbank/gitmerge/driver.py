"""`mbank merge-driver index|journal %O %A %B %P`: the program git runs to merge one file.

git hands the driver three temporary files — the common ancestor (%O), ours (%A) and theirs
(%B) — and the file's path (%P); the driver leaves the result in %A and exits 0 when the merge
is clean, non-zero when it left conflict markers (gitattributes(5), "Defining a custom merge
driver"). The merge itself is pure (`index_merge`, `journal_merge`); this shell reads, writes
and, whenever the pure merge cannot read a version, runs git's ordinary line merge
(`git merge-file`) so that a conflict is always shown and nothing is ever lost silently.
"""

from __future__ import annotations

import subprocess
import sys

from mbank.gitmerge import INDEX, JOURNAL
from mbank.gitmerge.index_merge import merge_index
from mbank.gitmerge.journal_merge import merge_journal

LABELS = ("ours", "theirs")
EXIT_CLEAN = 0
EXIT_CONFLICT = 1
# What the driver answers when even `git merge-file` could not run: %A is left as ours, and
# git records a conflict on the file.
EXIT_FAILED = 2


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def merge_bytes(kind: str, base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int] | None:
    """The merged bytes and the conflict count, or None when git's line merge must decide."""
    if kind == JOURNAL:
        journal = merge_journal(ours, theirs, LABELS)
        return None if journal is None else (journal.text, journal.conflicts)
    try:
        texts = [side.decode("utf-8") for side in (base, ours, theirs)]
    except UnicodeDecodeError:
        return None
    index = merge_index(texts[0], texts[1], texts[2], LABELS)
    return None if index is None else (index.text.encode("utf-8"), index.conflicts)


def line_merge(base: str, ours: str, theirs: str) -> int:
    """git's ordinary three-way merge of the files, written into `ours`; 0 clean, else not."""
    command = ["git", "merge-file", "-L", LABELS[0], "-L", "base", "-L", LABELS[1]]
    try:
        completed = subprocess.run([*command, ours, base, theirs], check=False)
    except OSError as exc:
        sys.stderr.write(f"mbank: could not run git merge-file ({exc}); {ours} is left as ours.\n")
        return EXIT_FAILED
    if completed.returncode < 0 or completed.returncode > 127:
        return EXIT_FAILED
    return EXIT_CLEAN if completed.returncode == 0 else EXIT_CONFLICT


def run_merge_driver(kind: str, base: str, ours: str, theirs: str, name: str) -> int:
    """Merge `ours` with `theirs` over `base` into `ours`; the exit status git expects."""
    merged = merge_bytes(kind, _read(base), _read(ours), _read(theirs))
    if merged is None:
        what = "entries" if kind == INDEX else "records"
        sys.stderr.write(
            f"mbank: {name} could not be merged by {what} (a version mbank cannot read); "
            "git's line merge decides, with conflict markers where the sides differ.\n"
        )
        return line_merge(base, ours, theirs)
    text, conflicts = merged
    with open(ours, "wb") as handle:
        handle.write(text)
    if conflicts:
        one, many = ("entry", "entries") if kind == INDEX else ("record", "records")
        noun = one if conflicts == 1 else many
        sys.stderr.write(
            f"mbank: {name}: {conflicts} {noun} changed on both sides; see the markers.\n"
        )
        return EXIT_CONFLICT
    return EXIT_CLEAN
