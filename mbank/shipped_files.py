"""The files the package ships: the starter set (`mbank.starter`) and the templates
(`mbank.templates`), read from the install (spec 05 §1, §7).

The shell's side of `mbank.catalogue`: the write tools' fact gatherers read these and hand them
to the reducers (`intent.facts`), which stay pure. Package data never changes while the process
runs, so each set is read once.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from mbank.catalogue import TEMPLATES_DIR, seeded_documents

STARTER_PACKAGE = "mbank.starter"
TEMPLATES_PACKAGE = "mbank.templates"


def _package_dir(package: str) -> Traversable | None:
    try:
        return files(package)
    except ModuleNotFoundError:  # a broken install; init reports it as `starter-missing`
        return None


def _markdown_files(root: Traversable | None) -> dict[str, str]:
    found: dict[str, str] = {}
    if root is None or not root.is_dir():
        return found
    pending: list[tuple[str, Traversable]] = [("", root)]
    while pending:
        prefix, directory = pending.pop()
        for entry in directory.iterdir():
            if entry.is_dir():
                if entry.name != "__pycache__":
                    pending.append((f"{prefix}{entry.name}/", entry))
            elif entry.name.endswith(".md"):
                found[prefix + entry.name] = entry.read_text(encoding="utf-8")
    return dict(sorted(found.items()))


@functools.cache
def _starter() -> tuple[tuple[str, str], ...]:
    return tuple(_markdown_files(_package_dir(STARTER_PACKAGE)).items())


@functools.cache
def _templates() -> tuple[tuple[str, str], ...]:
    return tuple(
        (f"{TEMPLATES_DIR}/{path}", text)
        for path, text in _markdown_files(_package_dir(TEMPLATES_PACKAGE)).items()
    )


def starter_location() -> str:
    """Where the package's starter set lives, for the `starter-missing` message (03 §12)."""
    found = _package_dir(STARTER_PACKAGE)
    return str(found) if found is not None else str(Path(__file__).resolve().parent / "starter")


def starter_files() -> dict[str, str]:
    """Every `.md` of the package's starter set, bank path → text, sorted by path (05 §1)."""
    return dict(_starter())


def shipped_templates() -> dict[str, str]:
    """Every shipped template, `flows/templates/<dir>/<file>` → text, sorted by path (05 §7)."""
    return dict(_templates())


def seed_files(name: str, today: str) -> dict[str, str]:
    """The 24 documents `init` writes for a project `name`, bank path → text, sorted (05 §2).

    `today` is accepted so that the init reducer hands over its intent's date as it does to
    every planner, but it does not change the output: no seeded document carries a date (05 §4
    gives none, and the changelog names no version or day so that seeding is identical
    everywhere). Refuses with `starter-missing` (03 §12) when the package's starter set is
    incomplete.
    """
    del today
    return seeded_documents(starter_files(), name, starter_location())
