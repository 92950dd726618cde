"""Shared fixtures: the fixture banks copied to tmp_path, the top-level snapshot directory,
`assert_unchanged`, the anyio backend and the opt-in corpus roots."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_banks import (  # noqa: F401 - re-exported for tests that still import them here
    FIXTURE_BANK,
    FIXTURE_OVERLAY,
    REPO,
    SNAPSHOT_ROOT,
    TESTS,
    TODAY,
    copy_fixture,
)
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation


class TopLevelJSONExtension(JSONSnapshotExtension):
    """Snapshots live in `<repo>/snapshots/<test module>/` (spec 07 §2.2)."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOT_ROOT / test_location.basename)


@pytest.fixture
def snapshot(snapshot: Any) -> Any:
    return snapshot.with_defaults(extension_class=TopLevelJSONExtension)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fixture_bank(tmp_path: Path) -> Path:
    """A private copy of the 17-file base fixture bank."""
    return copy_fixture(tmp_path / "bank", overlay=False)


@pytest.fixture
def fixture_plus(tmp_path: Path) -> Path:
    """A private copy of the extended fixture: base plus overlay (25 files)."""
    return copy_fixture(tmp_path / "bank", overlay=True)


def tree_digest(root: Path, *, with_mtimes: bool = False) -> dict[str, str]:
    """Every path under root with its bytes' hash and permission bits (`.mbank/` included).

    The content of `.mbank/lock` is left out: each lock holder may rewrite it (spec 07 §1).
    """
    digest: dict[str, str] = {}
    if not root.exists():
        return digest
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            entry = f"mode={stat.S_IMODE(info.st_mode):o}"
            if stat.S_ISLNK(info.st_mode):
                entry += f" link={os.readlink(path)}"
            elif stat.S_ISREG(info.st_mode) and relative != ".mbank/lock":
                entry += " sha=" + hashlib.sha256(path.read_bytes()).hexdigest()
            if with_mtimes:
                entry += f" mtime={info.st_mtime_ns}"
            digest[relative] = entry
    return digest


@pytest.fixture
def assert_unchanged() -> Callable[[Path], Any]:
    """`with assert_unchanged(root): ...` fails if anything under root changed."""
    import contextlib

    @contextlib.contextmanager
    def check(root: Path) -> Iterator[None]:
        before = tree_digest(root)
        yield
        after = tree_digest(root)
        assert after == before, "a refused or read-only call changed the bank"

    return check


def corpus_roots() -> list[Path] | None:
    """Bank roots named by MBANK_TEST_ROOTS; None when unset (the corpus tier is skipped).

    An entry may be a bank root (it has `dna/` or any `.md` file at its top) or a folder whose
    subdirectories are bank roots, like `../shared/corpora`. A named path that does not exist
    fails the tier rather than skipping it (spec 07 §2.7).
    """
    value = os.environ.get("MBANK_TEST_ROOTS")
    if not value:
        return None
    roots: list[Path] = []
    for entry in value.split(os.pathsep):
        if not entry:
            continue
        path = Path(entry).resolve()
        if not path.is_dir():
            pytest.fail(f"MBANK_TEST_ROOTS names a path that does not exist: {entry}")
        if (path / "dna").is_dir():
            roots.append(path)
        else:
            roots.extend(sorted(child for child in path.iterdir() if (child / "dna").is_dir()))
    return roots


@pytest.fixture
def corpus() -> dict[str, Path]:
    """The corpus banks by folder name; skips when MBANK_TEST_ROOTS is unset."""
    roots = corpus_roots()
    if roots is None:
        pytest.skip("MBANK_TEST_ROOTS is not set (opt-in corpus tier)")
    return {root.name: root for root in roots}


# Hypothesis profiles (spec 07 §4.4): `ci` is reproducible, `fuzz` explores; HYPOTHESIS_PROFILE
# picks one. No example database: tests never write into the repository.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile(
    "ci", max_examples=200, derandomize=True, deadline=None, database=None
)
_hypothesis_settings.register_profile("fuzz", max_examples=5_000, deadline=None, database=None)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def private_projection_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every process the tests start keeps its projection cache in one private directory, never
    the user's `~/.cache` (the tests that exercise the cache choose their own)."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous
