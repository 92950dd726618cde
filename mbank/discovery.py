"""Finding the bank from a working directory (spec 04 §9.1 for the CLI, §10 for the hook).

Standard library only: the CLI resolves its root before any command runs, and the hook must
stay light.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

BANK_NAMES = ("memory_bank", "memory-bank")


def upwards(start: str) -> Iterator[str]:
    """`start`, then each parent directory up to the filesystem root."""
    directory = start
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory = parent


BANK_MARK = "dna"  # the bank's own governance folder: a directory holding it is a bank


def find_bank(start: str, top: str | None) -> str | None:
    """The bank around or above `start`, up to `top` (the git work tree's top, when known):
    at each level the directory itself when it holds `dna/` (the working directory is inside
    a bank, whatever its name), else its `memory_bank/` (else `memory-bank/`); None if none."""
    stop = os.path.abspath(top) if top is not None else None
    for directory in upwards(os.path.abspath(start)):
        if os.path.isdir(os.path.join(directory, BANK_MARK)):
            return directory
        for name in BANK_NAMES:
            candidate = os.path.join(directory, name)
            if os.path.isdir(candidate):
                return candidate
        if directory == stop:
            return None
    return None


def git_top(start: str) -> str | None:
    """The nearest directory from `start` upwards that holds a `.git` entry, else None.

    The one walk to the work tree's top (CLI discovery, `bodyFile` confinement). A `.git` must
    exist through links: a dangling `.git` symlink makes no repository for git or dulwich.
    """
    for directory in upwards(start):
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
    return None


def discover_root(start: str) -> str | None:
    """The first `memory_bank/` (else `memory-bank/`) from `start` up to the git top."""
    start = os.path.abspath(start)
    return find_bank(start, git_top(start))
