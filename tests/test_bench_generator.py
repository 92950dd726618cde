"""The benchmark bank generator is deterministic and shaped as spec 07 §6.1 says.

"Size" is the number of `.md` documents in the generated bank, everything included
(governance, section indexes, root index); `--materialized` adds the 23 template files on top.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from pathlib import Path

import pytest
import yaml

# bench/ lives in the repository, not in the installed package; `pytest` (unlike
# `python -m pytest`) does not put the repository root on sys.path.
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.generate import DEFAULT_SEED, GenerationReport, generate, layer_of  # noqa: E402

SIZE = 368


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below `root` except `.git/`: its bytes and its mtime in nanoseconds."""
    state: dict[str, tuple[bytes, int]] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            full = Path(directory, name)
            state[full.relative_to(root).as_posix()] = (full.read_bytes(), full.stat().st_mtime_ns)
    return state


def documents(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GenerationReport]:
    out = tmp_path_factory.mktemp("bench") / "bank"
    return out, generate(SIZE, DEFAULT_SEED, out)


def test_generating_twice_gives_identical_bytes_and_mtimes(
    bank: tuple[Path, GenerationReport], tmp_path: Path
) -> None:
    first, _ = bank
    second = tmp_path / "again"
    generate(SIZE, DEFAULT_SEED, second)
    a, b = tree_state(first), tree_state(second)
    assert sorted(a) == sorted(b)
    for path in a:
        assert a[path] == b[path], path


def test_a_different_seed_gives_a_different_bank(
    bank: tuple[Path, GenerationReport], tmp_path: Path
) -> None:
    first, _ = bank
    report = generate(SIZE, DEFAULT_SEED + 1, tmp_path / "other")
    assert report.documents == SIZE
    registry = Path("features", "README.md")
    assert (first / registry).read_bytes() != (tmp_path / "other" / registry).read_bytes()


def test_size_is_the_number_of_markdown_documents(bank: tuple[Path, GenerationReport]) -> None:
    root, report = bank
    assert len(documents(root)) == SIZE == report.documents
    assert report.bytes == sum((root / p).stat().st_size for p in documents(root))


def test_layer_mix_is_roughly_as_specified(bank: tuple[Path, GenerationReport]) -> None:
    root, report = bank
    counts: dict[str, int] = {}
    for path in documents(root):
        counts[layer_of(path)] = counts.get(layer_of(path), 0) + 1
    assert counts == report.layers
    share = {layer: n / SIZE for layer, n in counts.items()}
    assert 0.60 <= share["delivery"] <= 0.80
    assert 0.15 <= share["knowledge"] <= 0.21
    assert 0.06 <= share["decision"] <= 0.10
    assert 0.01 <= share["flow"] <= 0.04
    assert 0.005 <= share["inbox"] <= 0.02
    assert 0.005 <= share["other"] <= 0.02
    assert counts["dna"] == 8


def test_frontmatter_bodies_and_indexes_look_like_the_corpora(
    bank: tuple[Path, GenerationReport],
) -> None:
    root, _ = bank
    paths = documents(root)
    invalid = 0
    russian = 0
    link = re.compile(r"\]\(([^)\s]+\.md)\)")
    for path in paths:
        text = (root / path).read_text(encoding="utf-8")
        head, _, body = text.removeprefix("---\n").partition("\n---\n")
        try:
            yaml.load(head, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            invalid += 1
        russian += bool(re.search("[а-яё]", body))
        if posixpath.basename(path) == "README.md":
            for target in link.findall(body):
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
                assert (root / resolved).is_file(), f"{path} lists a missing {target}"
    assert 1 <= invalid <= 0.04 * SIZE
    assert 1 <= russian <= 0.05 * SIZE
    registry = (root / "features" / "README.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^\| `FT-\d{3}` \|", registry, re.M)) >= 70
    brief = (root / "features" / "FT-001" / "brief.md").read_text(encoding="utf-8")
    assert 3 <= len(re.findall(r"^## ", brief, re.M)) <= 8


def test_governance_declares_the_starter_contract(bank: tuple[Path, GenerationReport]) -> None:
    root, _ = bank
    governance = (root / "dna" / "governance.md").read_text(encoding="utf-8")
    assert "The root document is `principles.md`." in governance
    assert "Every `active` non-root document must define `derived_from`." in governance
    assert "Cyclic dependencies are forbidden." in governance
    assert "| `_inbox` | `inbox` | `0.2` |" in governance
    frontmatter = (root / "dna" / "frontmatter.md").read_text(encoding="utf-8")
    declared = {
        line.split("|")[1].strip(" `"): set(re.findall(r"`([a-z_-]+)`", line.split("|", 2)[2]))
        for line in frontmatter.splitlines()
        if line.startswith("|") and line.count("|") >= 3
    }
    assert declared["status"] == {"draft", "active", "archived"}
    assert declared["decision_status"] == {"proposed", "accepted", "superseded", "rejected"}


def test_materialized_adds_the_templates(tmp_path: Path) -> None:
    report = generate(SIZE, DEFAULT_SEED, tmp_path / "m", materialized=True)
    assert report.documents == SIZE + 23
    assert len(list((tmp_path / "m" / "flows" / "templates").rglob("*.md"))) == 24


def test_git_history_is_deterministic(tmp_path: Path) -> None:
    from dulwich.repo import Repo

    heads = []
    for name in ("a", "b"):
        report = generate(SIZE, DEFAULT_SEED, tmp_path / name, git_commits=5)
        assert report.documents == SIZE
        repo = Repo(str(tmp_path / name))
        try:
            heads.append(repo.head())
            assert len(list(repo.get_walker())) == 5
        finally:
            repo.close()
    assert heads[0] == heads[1]
    assert tree_state(tmp_path / "a") == tree_state(tmp_path / "b")


def test_refuses_a_directory_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        generate(SIZE, DEFAULT_SEED, tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_a_generated_directory_is_regenerated_in_place(tmp_path: Path) -> None:
    generate(SIZE, DEFAULT_SEED, tmp_path / "g")
    (tmp_path / "g" / "stray.md").write_text("x")
    report = generate(SIZE, DEFAULT_SEED, tmp_path / "g")
    assert report.documents == len(documents(tmp_path / "g")) == SIZE


def test_a_complete_starter_is_copied_instead_of_the_builtin_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.generate as gen

    starter = tmp_path / "starter"
    for path, text in gen.builtin_governance().items():
        (starter / path).parent.mkdir(parents=True, exist_ok=True)
        (starter / path).write_text(text.replace("Ten principles", "Ten copied principles"))
    monkeypatch.setattr(gen, "_starter_dir", lambda: starter)
    report = generate(SIZE, DEFAULT_SEED, tmp_path / "bank")
    assert report.governance == "starter"
    assert report.documents == SIZE
    principles = (tmp_path / "bank" / "dna" / "principles.md").read_text(encoding="utf-8")
    assert "Ten copied principles" in principles
