"""Every Python package in the tree ships in the wheel under its installed name."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from fixture_banks import REPO


def test_every_package_directory_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for init in (REPO / "mbank").rglob("__init__.py"):
        relative = init.parent.relative_to(REPO)
        found.add(".".join(relative.parts))
    for top in ("reducers", "gates", "starter", "templates"):
        if (REPO / top / "__init__.py").exists():
            found.add(f"mbank.{top}")
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"


def test_no_top_level_gates_or_reducers_package_is_installed() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = config["tool"]["setuptools"]["packages"]
    assert "gates" not in listed and "reducers" not in listed
    mapping = config["tool"]["setuptools"]["package-dir"]
    assert mapping["mbank.reducers"] == "reducers" and mapping["mbank.gates"] == "gates"


def test_the_wheel_carries_the_language_tables(tmp_path: Path) -> None:
    """`mbank/lang.py` reads its dictionary from package data: a wheel without it is broken."""
    # pip builds in the source tree (a build/ folder): build a copy, never the checkout
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    for name in ("mbank", "reducers", "gates", "starter", "templates"):
        shutil.copytree(
            REPO / name,
            source / name,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
        )
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("mbank-*.whl")
    shipped = {
        name: data
        for name, data in _wheel_members(wheel).items()
        if name.startswith("mbank/lang_data/")
    }
    sources = sorted((REPO / "mbank" / "lang_data").glob("*.tsv"))
    assert {f"mbank/lang_data/{path.name}" for path in sources} == set(shipped)
    assert {"dictionary.tsv", "stopwords.tsv", "ru_endings.tsv", "translit.tsv"} <= {
        path.name for path in sources
    }
    for path in sources:
        assert shipped[f"mbank/lang_data/{path.name}"] == path.read_bytes()


def _wheel_members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_language_tables_are_read_once_from_package_data() -> None:
    from mbank import lang

    lang.data_rows.cache_clear()
    rows = lang.data_rows("dictionary")
    assert lang.data_rows("dictionary") is rows
    assert lang.data_rows.cache_info().hits == 1
    assert tuple((row[0], row[1:]) for row in rows) == lang.ENTRIES
    assert len(lang.ENTRIES) >= 192
