"""The functional core is pure by construction: nothing gates/ or reducers/ import reaches IO.

ARCHITECTURE.md promises gates and reducers without disk, clock or environment. This proves it
on the source: starting from every module of `gates/` and `reducers/`, follow each `mbank.*`
import (absolute, relative, inside functions too, and the parent packages whose `__init__`
runs first) through the project's own files, and fail on any reached module that imports one
of the IO modules below. The message names the chain of modules that leads there. The walker is
itself tested on small synthetic packages, so the test is known to be able to fail.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest
from fixture_banks import REPO

PROJECT = "mbank"
# Whole modules the core may not import (any of their submodules either: `os.path` is `os`).
FORBIDDEN_MODULES = frozenset(
    {"os", "subprocess", "shutil", "tempfile", "socket", "random", "io", "glob", "dulwich", "mcp"}
)
# `pathlib` is allowed for its pure paths (PurePosixPath) only: `Path` touches the disk.
FORBIDDEN_NAMES = frozenset({("pathlib", "Path")})


def module_file(root: Path, name: str) -> Path | None:
    """The source of project module `name` under `root`, or None when it is not one."""
    parts = name.split(".")
    if parts[0] != PROJECT:
        return None
    base = root.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def imports_of(root: Path, name: str, source: Path) -> list[tuple[str, str | None]]:
    """Every import in `source` as (module, name taken from it), in file order.

    The name is None for `import module`, and for `from package import submodule` (then the
    pair is the submodule itself, as the import system loads it).
    """
    found: list[tuple[str, str | None]] = []
    package = name.split(".") if source.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                module = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.append(
                    (submodule, None) if module_file(root, submodule) else (module, alias.name)
                )
    return found


def forbidden(module: str, imported: str | None) -> str | None:
    """What makes this import IO, spelled for the message, or None when it is allowed."""
    if module.split(".")[0] in FORBIDDEN_MODULES:
        return module
    if imported is not None and (module, imported) in FORBIDDEN_NAMES:
        return f"{module}.{imported}"
    if module == "pathlib" and imported is None:
        return "pathlib (import pathlib gives pathlib.Path)"
    return None


def io_reached(root: Path, starts: list[str]) -> tuple[list[str], set[str]]:
    """Breadth first from `starts`: one line per offending import with its chain, and every
    project module reached."""
    came_from: dict[str, str | None] = {start: None for start in starts}
    queue = deque(starts)
    offences: list[str] = []

    def chain(name: str) -> list[str]:
        links = [name]
        while (parent := came_from[links[-1]]) is not None:
            links.append(parent)
        return links[::-1]

    while queue:
        name = queue.popleft()
        source = module_file(root, name)
        if source is None:
            continue
        for module, imported in imports_of(root, name, source):
            offence = forbidden(module, imported)
            if offence is not None:
                line = " → ".join([*chain(name), offence])
                if line not in offences:  # `from os import sep, path` is one offence
                    offences.append(line)
                continue
            parts = module.split(".")
            # `import mbank.a.b` runs mbank/__init__ and mbank/a/__init__ before b.
            for depth in range(1, len(parts) + 1):
                reached = ".".join(parts[:depth])
                if reached not in came_from and module_file(root, reached) is not None:
                    came_from[reached] = name
                    queue.append(reached)
    return offences, set(came_from)


def core_modules(root: Path) -> list[str]:
    """Every module of the top-level gates/ and reducers/, under its one installed name."""
    return [
        f"{PROJECT}.{directory}.{source.stem}".removesuffix(".__init__")
        for directory in ("gates", "reducers")
        for source in sorted((root / directory).glob("*.py"))
    ]


def test_nothing_the_core_imports_reaches_io() -> None:
    offences, reached = io_reached(REPO, core_modules(REPO))
    assert not offences, "the pure core reaches IO:\n" + "\n".join(offences)
    # The walk really went through the project: the projection, the parser, the validator.
    assert {"mbank.projection", "mbank.parse", "mbank.validate", "mbank.catalogue"} <= reached
    assert not {"mbank.snapshot", "mbank.shipped_files", "mbank.journal"} & reached


def test_every_core_module_takes_the_snapshot_from_the_projection() -> None:
    for name in core_modules(REPO):
        source = module_file(REPO, name)
        assert source is not None
        modules = {module for module, _ in imports_of(REPO, name, source)}
        assert "mbank.snapshot" not in modules, name


# --------------------------------------------------------------------------------------------
# The walker itself, on synthetic packages
# --------------------------------------------------------------------------------------------


def synthetic(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in {"mbank/__init__.py": "", "mbank/gates/__init__.py": "", **files}.items():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_walker_names_the_chain_to_a_path_two_imports_away(tmp_path: Path) -> None:
    root = synthetic(
        tmp_path,
        {
            "mbank/gates/g.py": "from mbank.middle import helper\n",
            "mbank/middle.py": "from mbank.far import helper\n",
            "mbank/far.py": "from pathlib import Path, PurePosixPath\n",
        },
    )
    offences, _ = io_reached(root, ["mbank.gates.g"])
    assert offences == ["mbank.gates.g → mbank.middle → mbank.far → pathlib.Path"]


def test_the_walker_follows_relative_lazy_and_parent_package_imports(tmp_path: Path) -> None:
    root = synthetic(
        tmp_path,
        {
            "mbank/gates/g.py": "from . import sibling\n",
            "mbank/gates/sibling.py": "def later():\n    from ..deep.leaf import x\n",
            "mbank/deep/__init__.py": "import os.path\n",
            "mbank/deep/leaf.py": "import subprocess\n",
        },
    )
    offences, reached = io_reached(root, ["mbank.gates.g"])
    assert sorted(offences) == [
        "mbank.gates.g → mbank.gates.sibling → mbank.deep → os.path",
        "mbank.gates.g → mbank.gates.sibling → mbank.deep.leaf → subprocess",
    ]
    assert {"mbank.gates", "mbank", "mbank.deep", "mbank.deep.leaf"} <= reached


@pytest.mark.parametrize(
    ("line", "offence"),
    [
        ("import mcp.types", "mcp.types"),
        ("from dulwich.repo import Repo", "dulwich.repo"),
        ("import io", "io"),
        ("import pathlib", "pathlib (import pathlib gives pathlib.Path)"),
        ("from pathlib import PurePosixPath", None),
        ("import posixpath", None),
        ("from mbank import missing_name", None),
    ],
)
def test_the_walker_judges_each_kind_of_import(
    tmp_path: Path, line: str, offence: str | None
) -> None:
    root = synthetic(tmp_path, {"mbank/gates/g.py": line + "\n"})
    offences, _ = io_reached(root, ["mbank.gates.g"])
    assert offences == ([] if offence is None else [f"mbank.gates.g → {offence}"])
