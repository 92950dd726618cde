"""Tables the package ships as tab-separated data files, read once per process.

Word lists and dictionaries are data, not code: a person edits a row without reading Python,
and the modules that use them stay short. `#` starts a comment line; blank lines are skipped.
"""

from __future__ import annotations

import functools
import importlib.resources


@functools.cache
def tsv_rows(package: str, *path: str) -> tuple[tuple[str, ...], ...]:
    """The non-comment rows of the package file `path`, each split on tabs and stripped."""
    return parse_tsv(importlib.resources.files(package).joinpath(*path).read_text("utf-8"))


def parse_tsv(text: str) -> tuple[tuple[str, ...], ...]:
    """The non-comment rows of a table's text, each split on tabs and stripped."""
    rows: list[tuple[str, ...]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rows.append(tuple(field.strip() for field in line.split("\t")))
    return tuple(rows)
