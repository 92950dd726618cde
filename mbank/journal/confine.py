"""Paths read back from `.mbank/` are hostile input: they pass a tool argument's confinement.

A write-ahead entry or a journal record names bank paths that mbank itself wrote, but a
cloned repository may carry any `.mbank/`, and a hand edit any text. Before recovery or undo
touches a path read from there, it must be a bank path exactly as a write could have made
it (normalised, relative, no `..`, no hidden or skipped segment: spec 01 §2.2, 03 §2.1), and
it must still lead to a place inside the bank on disk (no symbolic link on the way out).
"""

from __future__ import annotations

import os

from mbank.journal.layout import bank_absolute
from mbank.model import RefusalError
from mbank.paths import check_write_target, is_within, normalise_caller_path


def stored_path_problem(path: object, root: str, real_root: str) -> str | None:
    """Why `path` (read from `.mbank/`) is not a bank path a write could have made, or None."""
    if not isinstance(path, str):
        return "a path that is not text"
    try:
        normal = normalise_caller_path(path, root, real_root, lambda _path: True, lambda: True)
        check_write_target(normal, must_be_md=False)
    except RefusalError as refused:
        return refused.refusal.message
    if normal != path:
        return f"Path is not in its normal form: {path}"
    return None


def leads_outside(root: str, real_root: str, bank_path: str) -> bool:
    """True when `bank_path` on disk is a symbolic link, or its deepest existing ancestor's
    real path leaves the bank: a file there is not the bank's to touch."""
    absolute = bank_absolute(root, bank_path)
    probe = absolute
    while not os.path.lexists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if os.path.islink(absolute):
        return True
    return not is_within(os.path.realpath(probe), real_root)


def is_sha256(value: object) -> bool:
    """True for 64 lower-case hex digits (an object name, an op's hash)."""
    return (
        isinstance(value, str)
        and len(value) == 64
        and all(char in "0123456789abcdef" for char in value)
    )
