"""Every Python package in the tree ships in the wheel under its installed name."""

from __future__ import annotations

import tomllib

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
