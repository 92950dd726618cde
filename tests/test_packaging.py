"""Every Python package in the tree ships in the wheel under its installed name."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from fixture_banks import REPO

from mbank.catalogue import STARTER_PATHS, TEMPLATE_PATHS, TEMPLATES_DIR


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


# --------------------------------------------------------------------------------------------
# One module, one name (issue 12): the checkout and the wheel see each module once
# --------------------------------------------------------------------------------------------

CHECKOUT_PARTS = ("mbank", "gates", "reducers", "starter", "templates")


@pytest.mark.parametrize("bare", ["gates", "reducers", "starter", "templates"])
def test_a_top_level_directory_cannot_be_imported_under_its_bare_name(bare: str) -> None:
    # pytest puts the checkout on sys.path (pyproject's pythonpath), so the bare name is found.
    assert (REPO / bare / "__init__.py").is_file()
    with pytest.raises(ImportError) as caught:
        importlib.import_module(f"{bare}.paths" if bare == "gates" else bare)
    assert (
        str(caught.value)
        == f"{bare} is the checkout's copy of mbank.{bare}: import mbank.{bare} instead."
    )
    assert bare not in sys.modules


def test_the_gates_are_one_module_object_whatever_imports_them() -> None:
    from mbank.gates import paths
    from mbank.gates.paths import PathOnDisk

    assert importlib.import_module("mbank.gates.paths") is paths
    assert paths.PathOnDisk is PathOnDisk
    assert not [name for name in sys.modules if name.split(".")[0] in ("gates", "reducers")]


def plain_checkout(tmp_path: Path) -> Path:
    """The project's code as a checkout holds it, with no install anywhere near it."""
    copy = tmp_path / "checkout"
    for part in CHECKOUT_PARTS:
        shutil.copytree(
            REPO / part, copy / part, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
        )
    return copy


def run_in(checkout: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_a_plain_checkout_finds_every_shipped_file_and_refuses_the_bare_names(
    tmp_path: Path,
) -> None:
    checkout = plain_checkout(tmp_path)
    found = run_in(
        checkout,
        "import json, mbank, mbank.gates.paths\n"
        "from mbank.shipped_files import shipped_templates, starter_files, starter_location\n"
        "print(json.dumps([mbank.__file__, mbank.gates.paths.__file__, starter_location(),\n"
        "                  sorted(starter_files()), sorted(shipped_templates())]))\n",
    )
    assert found.returncode == 0, found.stderr
    init, gates, location, starter, templates = json.loads(found.stdout)
    assert init == str(checkout / "mbank" / "__init__.py")
    assert gates == str(checkout / "mbank" / "gates" / "paths.py")
    assert location == str(checkout / "mbank" / "starter")
    assert starter == sorted(STARTER_PATHS)
    assert templates == sorted(f"{TEMPLATES_DIR}/{path}" for path in TEMPLATE_PATHS)
    bare = run_in(checkout, "import gates.paths")
    assert bare.returncode == 1
    assert bare.stderr.strip().endswith(
        "ImportError: gates is the checkout's copy of mbank.gates: import mbank.gates instead."
    )


@pytest.mark.slow
def test_the_wheel_ships_the_data_and_each_module_under_one_name(tmp_path: Path) -> None:
    # Built from a copy: setuptools builds in the source tree (build/, *.egg-info).
    source = plain_checkout(tmp_path)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("mbank-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert len(names) == len(set(names))
    tops = {name.split("/")[0] for name in names}
    assert tops == {"mbank", next(t for t in tops if t.endswith(".dist-info"))}
    shipped = {name for name in names if name.endswith(".md")}
    assert shipped == {f"mbank/starter/{path}" for path in STARTER_PATHS} | {
        f"mbank/templates/{path}" for path in TEMPLATE_PATHS
    }
    for part in ("gates", "reducers"):
        modules = {p.name for p in (REPO / part).glob("*.py")}
        assert {n.split("/")[-1] for n in names if n.startswith(f"mbank/{part}/")} == modules


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
    from mbank.package_data import tsv_rows

    tsv_rows.cache_clear()
    rows = lang.data_rows("dictionary")
    assert lang.data_rows("dictionary") is rows
    assert tsv_rows.cache_info().hits == 1
    assert tuple((row[0], row[1:]) for row in rows) == lang.ENTRIES
    assert len(lang.ENTRIES) >= 192
