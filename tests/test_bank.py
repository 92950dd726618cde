"""The snapshot: the walk, change detection, and the derived maps of spec 01 §7, on the fixture
banks and on small banks built in tmp_path (spec 01 §1, §7, §11; 07 §3.3)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from fixture_banks import copy_fixture

from mbank.contract import EMPTY_CONTRACT, EMPTY_LAYERS
from mbank.model import Edge, VocabularyRow
from mbank.snapshot import Bank, Snapshot, walk_documents

Unchanged = Callable[[Path], AbstractContextManager[None]]


def write(root: Path, path: str, text: str = "") -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text or f"# {path}\n", encoding="utf-8")
    return target


def touch_later(path: Path) -> None:
    """Move a file's mtime forward, so a rewrite is seen even on coarse-clock file systems."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


def summary(snapshot: Snapshot) -> dict[str, Any]:
    """The derived maps as plain data (no root: nothing in them depends on where it is)."""
    contract = snapshot.contract
    return {
        "docs": {
            path: {"layer": doc.layer, "registeredIn": list(doc.registered_in)}
            for path, doc in snapshot.docs.items()
        },
        "incoming": {path: list(sources) for path, sources in snapshot.incoming.items()},
        "owners": {key: list(paths) for key, paths in snapshot.owners.items()},
        "indexLinks": [msgspec.to_builtins(link) for link in snapshot.index_links],
        "contract": {
            **{
                field: msgspec.to_builtins(getattr(contract, field))
                for field in contract.__struct_fields__
                if field != "declared_in"
            },
            "declared_in": [[f, v, p] for (f, v), p in contract.declared_in.items()],
        },
        "layers": msgspec.to_builtins(snapshot.layers),
        "vocabulary": msgspec.to_builtins(snapshot.vocabulary),
    }


# -- the fixture banks ------------------------------------------------------------------------


def test_the_base_fixture_indexes_17_documents(fixture_bank: Path) -> None:
    bank = Bank(fixture_bank)
    snapshot = bank.refresh()
    assert len(snapshot.docs) == 17
    assert bank.last_refresh_parsed == 17
    assert list(snapshot.docs) == sorted(snapshot.docs)


def test_the_extended_fixture_indexes_25_documents(fixture_plus: Path) -> None:
    assert len(Bank(fixture_plus).refresh().docs) == 25


def test_fixture_derived_maps(tmp_path: Path, snapshot: Any) -> None:
    base = copy_fixture(tmp_path / "base", overlay=False)
    extended = copy_fixture(tmp_path / "extended", overlay=True)
    assert summary(Bank(base).refresh()) == snapshot(name="base")
    assert summary(Bank(extended).refresh()) == snapshot(name="extended")


def test_reverse_edges_are_unique_sorted_and_only_to_documents(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    assert snapshot.incoming["dna/governance.md"] == (
        "README.md",
        "adr/README.md",
        "dna/frontmatter.md",
        "domain/README.md",
        "domain/rules.md",
        "flows/templates/README.md",
        "flows/templates/adr/ADR-ID.md",
        "flows/templates/feature/brief.md",
    )
    assert snapshot.incoming["domain/rules.md"] == (
        "engineering/architecture.md",
        "features/FT-001/brief.md",
    )
    assert "missing/nowhere.md" not in snapshot.incoming
    for sources in snapshot.incoming.values():
        assert list(sources) == sorted(set(sources))


def test_two_edges_to_one_target_count_once(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    write(tmp_path, "b.md", "---\nderived_from: [a.md, ./a.md, a.md#x]\n---\n")
    assert Bank(tmp_path).refresh().incoming == {"a.md": ("b.md",)}


def test_fit_is_carried_and_external_differs_from_broken(fixture_bank: Path) -> None:
    docs = Bank(fixture_bank).refresh().docs
    brief = docs["features/FT-001/brief.md"].derived_from
    assert brief[1].fit == "Only the accepted queue topology is reused."
    assert brief[2] == Edge("../../../outside-bank/upstream.md", None, None, True)
    broken = docs["engineering/architecture.md"].derived_from[1]
    assert (broken.resolved, broken.external) == ("missing/nowhere.md", False)
    assert broken.resolved not in docs  # broken: resolved, not external, not a document
    assert all(edge.external or edge.resolved in docs for edge in brief), (
        "FT-001 has no broken edge"
    )


def test_owner_map_keeps_the_conflict_in_path_order(fixture_bank: Path) -> None:
    owners = Bank(fixture_bank).refresh().owners
    assert owners["filter_thresholds"] == ("conflict.md", "domain/rules.md")
    assert owners["retry_policy"] == ("broken/bad-yaml.md",)  # recovered leniently
    assert owners["adr_template"] == ("flows/templates/adr/ADR-ID.md",)  # no status filter
    assert list(owners)[:2] == ["retry_policy", "filter_thresholds"]  # first-seen key order


def test_a_document_naming_a_key_twice_owns_it_once(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\ncanonical_for: [k, k]\n---\n")
    assert Bank(tmp_path).refresh().owners == {"k": ("a.md",)}


def test_registration_from_bullet_table_prose_and_numbered_links(fixture_bank: Path) -> None:
    docs = Bank(fixture_bank).refresh().docs
    registered_by_root = {
        "domain/README.md": "bullet",
        "engineering/architecture.md": "table row",
        "adr/README.md": "table row with a backticked label",
        "dna/principles.md": "prose",
        "features/FT-001/brief.md": "prose",
        "broken/bad-yaml.md": "numbered",
        "conflict.md": "numbered",
        "dna/README.md": "numbered",
        "flows/templates/README.md": "numbered",
    }
    for path, shape in registered_by_root.items():
        assert "README.md" in docs[path].registered_in, shape
    assert docs["dna/principles.md"].registered_in == ("README.md", "dna/README.md")
    assert docs["adr/ADR-001-queue-choice.md"].registered_in == ("adr/README.md",)


def test_the_orphan_has_no_registration(fixture_bank: Path) -> None:
    docs = Bank(fixture_bank).refresh().docs
    assert docs["orphan.md"].registered_in == ()
    assert docs["README.md"].registered_in == ()


def test_index_documents_are_function_index_or_readme(tmp_path: Path) -> None:
    write(tmp_path, "hub.md", "---\ndoc_function: index\n---\n- [a](a.md)\n")
    write(tmp_path, "sub/README.md", "- [b](b.md)\n- [b again](./b.md)\n- [self](README.md)\n")
    write(tmp_path, "plain.md", "- [a](a.md)\n")
    write(tmp_path, "a.md")
    write(tmp_path, "sub/b.md")
    snapshot = Bank(tmp_path).refresh()
    assert snapshot.docs["a.md"].registered_in == ("hub.md",)
    assert snapshot.docs["sub/b.md"].registered_in == ("sub/README.md",)  # unique
    assert snapshot.docs["sub/README.md"].registered_in == ()  # an index never registers itself
    assert [(link.source, link.raw) for link in snapshot.index_links] == [
        ("hub.md", "a.md"),
        ("sub/README.md", "b.md"),
        ("sub/README.md", "./b.md"),
        ("sub/README.md", "README.md"),
    ]


def test_index_links_include_dangling_entries(fixture_plus: Path) -> None:
    links = Bank(fixture_plus).refresh().index_links
    retired = [link for link in links if link.raw == "retired.md"]
    assert [(link.source, link.to, link.line) for link in retired] == [
        ("domain/README.md", "domain/retired.md", 20)
    ]
    assert not any("example" in link.raw for link in links)  # URL and fenced entry ignored


def test_the_contract_sets_of_spec_01_section_11(fixture_bank: Path) -> None:
    contract = Bank(fixture_bank).refresh().contract
    assert contract.present
    assert contract.source == (
        "dna/README.md",
        "dna/frontmatter.md",
        "dna/governance.md",
        "dna/principles.md",
    )
    assert contract.doc_kinds == ("governance", "domain", "engineering", "adr", "feature")
    assert contract.doc_functions == ("canonical", "index", "template")
    assert contract.statuses == ("draft", "active", "archived")
    assert contract.delivery_statuses == ("planned", "in_progress", "done", "cancelled")
    assert contract.decision_statuses == ("proposed", "accepted", "superseded", "rejected")
    assert contract.roots == ("dna/principles.md",)
    assert contract.requires_derived_from
    assert contract.forbids_cycles


def test_a_bank_rooted_at_domain_has_no_contract(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank / "domain").refresh()
    assert list(snapshot.docs) == ["README.md", "rules.md"]
    assert snapshot.contract == EMPTY_CONTRACT
    assert not snapshot.contract.present
    assert snapshot.layers == EMPTY_LAYERS
    assert snapshot.docs["rules.md"].registered_in == ("README.md",)
    assert snapshot.docs["rules.md"].derived_from[0].external  # ../dna/governance.md


def test_a_non_text_dna_document_contributes_nothing_to_the_contract(tmp_path: Path) -> None:
    (tmp_path / "dna").mkdir()
    (tmp_path / "dna" / "latin1.md").write_bytes("| `status` | `caf\xe9` |".encode("latin-1"))
    contract = Bank(tmp_path).refresh().contract
    assert contract.statuses == ()


# -- refresh and change detection -------------------------------------------------------------


def test_refresh_parses_only_what_moved(fixture_bank: Path) -> None:
    bank = Bank(fixture_bank)
    first = bank.refresh()
    assert bank.last_refresh_parsed == 17
    second = bank.refresh()
    assert bank.last_refresh_parsed == 0
    assert second is first
    rules = fixture_bank / "domain" / "rules.md"
    rules.write_text(rules.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    touch_later(rules)
    third = bank.refresh()
    assert bank.last_refresh_parsed == 1
    assert third is not first
    assert third.raw["domain/rules.md"].endswith("One more line.\n")
    assert third.docs["conflict.md"] is not None


def test_a_change_of_size_alone_is_seen(tmp_path: Path) -> None:
    page = write(tmp_path, "a.md", "# One\n")
    bank = Bank(tmp_path)
    bank.refresh()
    stamp = page.stat().st_mtime_ns
    page.write_text("# One, longer\n", encoding="utf-8")
    os.utime(page, ns=(stamp, stamp))  # same mtime: the size still moved
    assert bank.refresh().docs["a.md"].title == "One, longer"
    assert bank.last_refresh_parsed == 1


def test_a_change_of_mtime_alone_is_reparsed(tmp_path: Path) -> None:
    page = write(tmp_path, "a.md")
    bank = Bank(tmp_path)
    bank.refresh()
    touch_later(page)
    bank.refresh()
    assert bank.last_refresh_parsed == 1


def test_generation_increases_only_when_something_changed(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    bank = Bank(tmp_path)
    assert bank.refresh().generation == 1
    assert bank.refresh().generation == 1
    write(tmp_path, "b.md")
    assert bank.refresh().generation == 2
    assert bank.refresh().generation == 2
    (tmp_path / "b.md").unlink()
    after_delete = bank.refresh()
    assert (after_delete.generation, bank.last_refresh_parsed) == (3, 0)
    touch_later(tmp_path / "a.md")
    assert bank.refresh().generation == 4


def test_a_vanished_file_is_dropped_from_every_map(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "- [a](a.md)\n")
    write(tmp_path, "a.md", "---\ncanonical_for: [k]\nderived_from: [b.md]\n---\n")
    write(tmp_path, "b.md")
    bank = Bank(tmp_path)
    before = bank.refresh()
    assert (before.owners, before.incoming) == ({"k": ("a.md",)}, {"b.md": ("a.md",)})
    (tmp_path / "a.md").unlink()
    after = bank.refresh()
    assert list(after.docs) == ["README.md", "b.md"]
    assert "a.md" not in after.raw
    assert (after.owners, after.incoming) == ({}, {})
    assert [link.to for link in after.index_links] == ["a.md"]  # now a dangling entry


def test_the_snapshot_property_refreshes_once(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    bank = Bank(tmp_path)
    first = bank.snapshot
    assert bank.snapshot is first
    write(tmp_path, "b.md")
    assert bank.snapshot is first  # no implicit refresh after the first
    assert bank.refresh() is not first


def test_refresh_reads_never_write(fixture_bank: Path, assert_unchanged: Unchanged) -> None:
    with assert_unchanged(fixture_bank):
        bank = Bank(fixture_bank)
        bank.refresh()
        bank.refresh()
    assert not (fixture_bank / ".mbank").exists()


def test_the_snapshot_is_frozen(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    snapshot = Bank(tmp_path).refresh()
    with pytest.raises(AttributeError):
        snapshot.generation = 9  # type: ignore[misc]


def test_raw_text_is_kept_exactly(tmp_path: Path) -> None:
    text = "\ufeff---\r\ntitle: T\r\n---\r\nbody\r\n"
    (tmp_path / "a.md").write_bytes(text.encode("utf-8"))
    (tmp_path / "b.md").write_bytes(b"caf\xe9")
    snapshot = Bank(tmp_path).refresh()
    assert snapshot.raw["a.md"] == text
    assert snapshot.docs["a.md"].title == "T"
    assert snapshot.raw["b.md"] == ""
    assert snapshot.docs["b.md"].parse_error_kind == "invalid-encoding"


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_missing_or_a_file_is_an_empty_bank(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "bank"
    if kind == "file":
        root.write_text("not a directory", encoding="utf-8")
    snapshot = Bank(root).refresh()
    assert (snapshot.docs, snapshot.contract) == ({}, EMPTY_CONTRACT)


def test_a_root_that_disappears_empties_the_bank(tmp_path: Path) -> None:
    write(tmp_path / "bank", "a.md")
    bank = Bank(tmp_path / "bank")
    bank.refresh()
    (tmp_path / "bank" / "a.md").unlink()
    (tmp_path / "bank").rmdir()
    assert bank.refresh().docs == {}


# -- the walk ---------------------------------------------------------------------------------


def test_walk_order_is_by_code_point(tmp_path: Path) -> None:
    for name in ["a/b.md", "a-c.md", "B.md", "a.md", "é.md", "z.md", "a/a.md", "a0.md"]:
        write(tmp_path, name)
    assert list(Bank(tmp_path).refresh().docs) == [
        "B.md",
        "a-c.md",
        "a.md",
        "a/a.md",
        "a/b.md",
        "a0.md",
        "z.md",
        "é.md",
    ]


def test_dot_entries_and_skipped_directories_are_never_walked(tmp_path: Path) -> None:
    for name in [
        ".mbank/journal.md",
        ".git/x.md",
        ".obsidian/x.md",
        ".hidden.md",
        "a/.tmp-write.md",
        "node_modules/x.md",
        "dist/x.md",
        "deep/node_modules/x.md",
        "deep/dist/y.md",
        "dist.md",
        "node_modules.md",
        "kept/a.md",
    ]:
        write(tmp_path, name)
    assert list(Bank(tmp_path).refresh().docs) == ["dist.md", "kept/a.md", "node_modules.md"]


def test_only_lower_case_md_files_are_documents(tmp_path: Path) -> None:
    for name in ["x.MD", "y.Md", "notes.txt", "image.png", "schema.yaml", "z.md", "md"]:
        write(tmp_path, name)
    (tmp_path / "dir.md").mkdir()
    assert list(Bank(tmp_path).refresh().docs) == ["z.md"]


def test_symlinks_are_skipped_wherever_they_point(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md")
    bank_root = tmp_path / "bank"
    write(bank_root, "real.md")
    write(bank_root, "sub/inner.md")
    os.symlink(outside / "secret.md", bank_root / "out-link.md")
    os.symlink(bank_root / "real.md", bank_root / "in-link.md")
    os.symlink(outside, bank_root / "out-dir")
    os.symlink(bank_root / "sub", bank_root / "in-dir")
    os.symlink(bank_root, bank_root / "loop")
    os.symlink(tmp_path / "nowhere.md", bank_root / "dangling.md")
    assert list(Bank(bank_root).refresh().docs) == ["real.md", "sub/inner.md"]


def test_a_symlinked_root_is_walked(tmp_path: Path) -> None:
    write(tmp_path / "real", "a.md")
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert list(Bank(tmp_path / "link").refresh().docs) == ["a.md"]


def test_an_undecodable_file_name_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, "ok.md")
    try:
        with open(os.path.join(os.fsencode(tmp_path), b"bad-\xff.md"), "wb") as handle:
            handle.write(b"# bad\n")
    except OSError:
        pytest.skip("this file system refuses non-UTF-8 names")
    assert list(Bank(tmp_path).refresh().docs) == ["ok.md"]


def test_a_fifo_named_like_a_document_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, "ok.md")
    os.mkfifo(tmp_path / "pipe.md")
    started = time.monotonic()
    assert list(Bank(tmp_path).refresh().docs) == ["ok.md"]
    assert time.monotonic() - started < 5


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_an_unreadable_file_or_directory_is_skipped_silently(tmp_path: Path) -> None:
    write(tmp_path, "ok.md")
    locked = write(tmp_path, "locked.md")
    write(tmp_path, "closed/x.md")
    locked.chmod(0)
    (tmp_path / "closed").chmod(0)
    try:
        assert list(Bank(tmp_path).refresh().docs) == ["ok.md"]
    finally:
        (tmp_path / "closed").chmod(0o755)
        locked.chmod(0o644)


def test_walk_documents_yields_bank_and_absolute_paths(tmp_path: Path) -> None:
    write(tmp_path, "a/b.md")
    assert list(walk_documents(str(tmp_path))) == [("a/b.md", str(tmp_path / "a" / "b.md"))]


# -- vocabulary and layers follow every rebuild -----------------------------------------------

VOCABULARY = """---
title: Vocabulary
---
| Russian stem | English |
|---|---|
| корпус | corpus, collection |
| `книг` | book, books |
"""


def test_vocabulary_rows_appear_and_vanish_with_the_file(tmp_path: Path) -> None:
    write(tmp_path, "dna/principles.md")
    bank = Bank(tmp_path)
    assert bank.refresh().vocabulary == ()
    write(tmp_path, "dna/vocabulary.md", VOCABULARY)
    assert bank.refresh().vocabulary == (
        VocabularyRow("корпус", ("corpus", "collection")),
        VocabularyRow("книг", ("book", "books")),
    )
    (tmp_path / "dna" / "vocabulary.md").unlink()
    assert bank.refresh().vocabulary == ()


def test_vocabulary_is_read_only_from_dna_vocabulary_md(tmp_path: Path) -> None:
    write(tmp_path, "domain/vocabulary.md", VOCABULARY)
    write(tmp_path, "dna/other.md", VOCABULARY)
    assert Bank(tmp_path).refresh().vocabulary == ()


def test_vocabulary_belongs_to_one_bank(tmp_path: Path) -> None:
    write(tmp_path / "one", "dna/vocabulary.md", VOCABULARY)
    write(tmp_path / "two", "dna/principles.md")
    assert Bank(tmp_path / "one").refresh().vocabulary != ()
    assert Bank(tmp_path / "two").refresh().vocabulary == ()


LAYER_TABLE = (
    "| Directory | Layer |\n|---|---|\n| `features` | `knowledge` |\n| playbooks | flow |\n"
)


def test_layers_are_recomputed_on_every_rebuild(fixture_bank: Path) -> None:
    bank = Bank(fixture_bank)
    brief = "features/FT-001/brief.md"
    assert bank.refresh().docs[brief].layer == "delivery"
    write(fixture_bank, "playbooks/run.md")
    table = write(fixture_bank, "dna/layers.md", LAYER_TABLE)
    snapshot = bank.refresh()
    assert bank.last_refresh_parsed == 2  # the brief itself was not re-parsed
    assert snapshot.docs[brief].layer == "knowledge"
    assert snapshot.docs["playbooks/run.md"].layer == "flow"
    assert snapshot.docs["domain/rules.md"].layer == "knowledge"  # undeclared: built-in
    assert snapshot.layers.by_dir == {"features": "knowledge", "playbooks": "flow"}
    table.unlink()  # deleting the layer table takes effect at once
    snapshot = bank.refresh()
    assert snapshot.docs[brief].layer == "delivery"
    assert snapshot.docs["playbooks/run.md"].layer == "other"
    assert snapshot.layers == EMPTY_LAYERS


def test_registration_is_recomputed_when_only_the_index_changes(tmp_path: Path) -> None:
    write(tmp_path, "a.md")
    index = write(tmp_path, "README.md", "nothing yet\n")
    bank = Bank(tmp_path)
    assert bank.refresh().docs["a.md"].registered_in == ()
    index.write_text("- [a](a.md)\n", encoding="utf-8")
    touch_later(index)
    assert bank.refresh().docs["a.md"].registered_in == ("README.md",)
    assert bank.last_refresh_parsed == 1


def test_file_names_are_compared_as_exact_strings(tmp_path: Path) -> None:
    # No Unicode normalisation (spec 01 §1.1): NFC and NFD spellings are two documents.
    write(tmp_path, "caf\u00e9.md")
    write(tmp_path, "cafe\u0301.md")
    assert list(Bank(tmp_path).refresh().docs) == ["cafe\u0301.md", "caf\u00e9.md"]


def test_entries_that_cannot_be_listed_or_read_are_skipped_with_a_debug_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Running as root, permissions cannot make a file unreadable: the failures are injected.
    write(tmp_path, "ok.md")
    write(tmp_path, "gone.md")
    write(tmp_path, "closed/x.md")
    real_open = os.open

    def open_(path: Any, flags: int, *args: Any) -> int:
        # The walk opens each directory to list it, and each changed document to read it.
        if str(path).endswith(("closed", "gone.md")):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setenv("MBANK_DEBUG", "1")
    assert list(Bank(tmp_path).refresh().docs) == ["ok.md"]
    err = capsys.readouterr().err
    assert "mbank: cannot list " in err and "closed" in err
    assert "mbank: cannot open " in err and "gone.md" in err
    monkeypatch.delenv("MBANK_DEBUG")
    Bank(tmp_path).refresh()
    assert capsys.readouterr().err == ""  # silent outside debug mode


HARMLESS: dict[str, Callable[[Path], object]] = {
    "a hidden document": lambda root: write(root, "notes/.draft.md", "x"),
    "a file that is not markdown": lambda root: write(root, "notes/a.txt", "x"),
    "an empty directory": lambda root: (root / "empty").mkdir(),
    "a document in a skipped directory": lambda root: write(root, "node_modules/a.md", "x"),
    "a symlink named like a document": lambda root: (root / "link.md").symlink_to("a.md"),
}
NOTICED: dict[str, Callable[[Path], object]] = {
    "a new document": lambda root: write(root, "c.md", "new"),
    "a new document in a new directory": lambda root: write(root, "new/deep/c.md", "new"),
    "a document deleted": lambda root: (root / "notes" / "b.md").unlink(),
    "a document replaced by a symlink": lambda root: (
        (root / "notes" / "b.md").unlink(),
        (root / "notes" / "b.md").symlink_to("../a.md"),
    ),
    "a document replaced by a directory": lambda root: (
        (root / "notes" / "b.md").unlink(),
        (root / "notes" / "b.md").mkdir(),
    ),
    "a document's directory renamed": lambda root: (root / "notes").rename(root / "other"),
    "a document edited": lambda root: write(root, "a.md", "edited"),
    # a directory the check trusts by its own facts (issue 17, fourth part) still tells these
    "a document renamed in its directory": lambda root: (root / "notes" / "b.md").rename(
        root / "notes" / "z.md"
    ),
    "a document replaced by a rename over it": lambda root: (
        write(root, "notes/.b.md.tmp", "b"),
        os.replace(root / "notes" / ".b.md.tmp", root / "notes" / "b.md"),
    ),
    "a new document, its directory's times put back": lambda root: _times_put_back(
        root / "notes", lambda: write(root, "notes/c.md", "new")
    ),
    "a directory replaced by a symlink to it": lambda root: (
        (root / "notes").rename(root / "real-notes"),
        (root / "notes").symlink_to("real-notes"),
    ),
}


def _times_put_back(directory: Path, change: Callable[[], object]) -> None:
    """Make `change`, then set the directory's atime and mtime back (its ctime moves on)."""
    before = directory.stat()
    change()
    os.utime(directory, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.parametrize("change", [*HARMLESS, *NOTICED])
def test_the_unchanged_check_agrees_with_a_full_walk(tmp_path: Path, change: str) -> None:
    # the check every read runs first (`Bank._unchanged`) takes a name it kept as a document
    # on its facts alone; anything else is classified as the full walk would
    write(tmp_path, "a.md", "a")
    write(tmp_path, "notes/b.md", "b")
    time.sleep(0.12)  # older than the racy window: the facts are trusted
    bank = Bank(tmp_path)
    first = bank.refresh()
    assert sorted(bank._directories) == ["", "notes/"]  # both trusted by their own facts
    assert bank._unchanged()
    {**HARMLESS, **NOTICED}[change](tmp_path)
    assert bank._unchanged() is (change in HARMLESS)
    after = bank.refresh()
    assert (after is first) is (change in HARMLESS)
    assert summary(after) == summary(Bank(tmp_path).refresh())
    if change in HARMLESS:  # (a document just read is racy: re-read until it is older)
        assert bank._unchanged()


def test_a_directory_unchanged_since_it_was_listed_is_not_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.md", "a")
    write(tmp_path, "notes/b.md", "b")
    write(tmp_path, "notes/deep/c.md", "c")
    time.sleep(0.12)
    bank = Bank(tmp_path)
    bank.refresh()
    with monkeypatch.context() as patched:
        patched.setattr(os, "scandir", _no_listing)
        assert bank._unchanged()
    write(tmp_path, "notes/.hidden", "x")  # the directory's facts move: it is listed once
    assert bank._unchanged()
    time.sleep(0.12)  # learned again, once older than the racy window
    assert bank._unchanged()
    with monkeypatch.context() as patched:
        patched.setattr(os, "scandir", _no_listing)
        assert bank._unchanged()
    write(tmp_path, "notes/deep/d.md", "d")
    assert not bank._unchanged()


def _no_listing(*_: object) -> None:
    raise AssertionError("listed a directory whose facts had not moved")


def test_a_directory_changed_just_before_it_was_listed_is_listed_again(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "a")
    time.sleep(0.12)
    write(tmp_path, "notes/b.md", "b")  # `notes/` is racy when the walk lists it
    bank = Bank(tmp_path)
    bank.refresh()
    assert "notes/" not in bank._directories and "" not in bank._directories


# --------------------------------------------------------------------------------------------
# A request answered by a walk that began after it arrived (issue 17, fourth part)
# --------------------------------------------------------------------------------------------


def _no_walk(*_: object) -> bool:
    raise AssertionError("walked again for a request a later walk already answers")


def test_a_walk_begun_after_a_request_arrived_answers_it(
    fixture_bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mbank.snapshot as snapshot_module

    bank = Bank(fixture_bank)
    arrived = time.monotonic_ns()
    first = bank.refresh()
    with monkeypatch.context() as patched:
        patched.setattr(snapshot_module, "_unchanged_against", _no_walk)
        assert bank.refresh(not_before=arrived) is first
    readme = fixture_bank / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nzanzibar\n", encoding="utf-8")
    # a request arriving after that walk began walks, and sees the edit made since
    later = bank.refresh(not_before=time.monotonic_ns())
    assert "zanzibar" in later.raw["README.md"]
    assert bank.refresh() is later  # no not_before: an ordinary refresh, unchanged


def test_a_write_or_a_failed_walk_leaves_no_walk_to_answer_from(
    fixture_bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mbank.snapshot as snapshot_module

    bank = Bank(fixture_bank)
    arrived = time.monotonic_ns()
    bank.refresh()
    readme = fixture_bank / "README.md"
    readme.write_text("# Index\n\nzanzibar\n", encoding="utf-8")
    bank.forget_walk()  # what a write does once it is done
    assert "zanzibar" in bank.refresh(not_before=arrived).raw["README.md"]

    def broken(*_: object) -> bool:
        raise OSError("the walk failed")

    arrived = time.monotonic_ns()
    readme.write_text("# Index\n\nquokka\n", encoding="utf-8")
    with monkeypatch.context() as patched, pytest.raises(OSError, match="the walk failed"):
        patched.setattr(snapshot_module, "_unchanged_against", broken)
        bank.refresh()
    assert "quokka" in bank.refresh(not_before=arrived).raw["README.md"]


def test_a_server_read_after_the_warm_up_sees_an_edit_and_a_write_forgets_the_walk(
    fixture_bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mbank.writes
    from mbank.reducers.registry import WRITE_TOOLS
    from mbank.server import BankService

    monkeypatch.setenv("MBANK_NO_CACHE", "1")
    service = BankService(str(fixture_bank))
    arrived = time.monotonic_ns()
    service.warm()
    readme = fixture_bank / "README.md"
    readme.write_text("# Index\n\nzanzibar\n", encoding="utf-8")
    seen = service.read("test", lambda snapshot: snapshot.raw["README.md"])
    assert "zanzibar" in seen

    def writes_then_fails(*_: object, **__: object) -> None:
        readme.write_text("# Index\n\nquokka\n", encoding="utf-8")
        raise RuntimeError("a write that changed a file and then failed")

    monkeypatch.setattr(mbank.writes, "run_write", writes_then_fails)
    service.bank.refresh(not_before=arrived)  # a walk began after `arrived`, just now
    with pytest.raises(Exception, match="changed a file"):
        service.write(WRITE_TOOLS[0], {})
    # a request that arrived before that walk, handled after the write: it walks again
    assert "quokka" in service.bank.refresh(not_before=arrived).raw["README.md"]


def test_the_warm_up_turns_the_collector_back_on_when_the_start_held_it_off(
    fixture_bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mbank serve` starts with the cyclic collector off (`cli._run_serve`); the server's
    warm-up turns it on again, whether or not the warm-up succeeds."""
    import gc

    from mbank.server import BankService

    monkeypatch.setenv("MBANK_NO_CACHE", "1")
    was = gc.isenabled()
    try:
        for failing in (False, True):
            service = BankService(str(fixture_bank))
            if failing:
                monkeypatch.setattr(service.bank, "refresh", _no_walk)
            service.collect_when_warm = True
            gc.disable()
            service.warm()
            assert gc.isenabled() and service.warmed.is_set()
        gc.disable()
        BankService(str(fixture_bank)).warm()  # not asked to: the collector stays as it was
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
