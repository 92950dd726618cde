"""The persisted projection cache (issue 17): what a cached process serves is what a fresh
build would, whatever happened to the files or to the cache file in between."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from fixture_banks import copy_fixture
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import mbank.snapshot as snapshot_module
from mbank.budget import ServerProcess
from mbank.projection import Snapshot, build_snapshot
from mbank.projection_cache import (
    PersistedFile,
    ProjectionCache,
    cache_directory,
    cache_for,
    switched_off,
    warm_start,
)
from mbank.read import read
from mbank.route import route
from mbank.search import SearchIndex, search
from mbank.search_state import (
    DerivedBodies,
    LazyDocInfos,
    PackedPostings,
    build_packed,
    export_state,
    index_from_state,
)
from mbank.snapshot import RACY_NS, Bank, is_racy

AGED = RACY_NS / 1e9 * 1.5  # seconds after which every file written so far is past "racy"
QUESTIONS = ("how a feature package moves through its gates", "architecture decision records")
TERMS = ("the", "feature", "registry")


def aged() -> None:
    time.sleep(AGED)


def comparable(snapshot: Snapshot) -> Snapshot:
    return msgspec.structs.replace(snapshot, generation=0)


def answers(snapshot: Snapshot, index: SearchIndex) -> list[Any]:
    """What every read answers on this projection (route, search, read of each document)."""
    found: list[Any] = [route(snapshot, index, question) for question in QUESTIONS]
    found += [search(snapshot, index, term) for term in TERMS]
    found += [read(snapshot, [path]) for path in sorted(snapshot.docs)[:5]]
    return found


class Process:
    """One mbank process on a bank: its Bank with the cache, and its search index."""

    def __init__(self, root: Path, directory: Path) -> None:
        self.bank = Bank(root, cache=ProjectionCache(os.path.realpath(root), "t", str(directory)))
        self.index = SearchIndex()

    def serve(self) -> tuple[Snapshot, SearchIndex]:
        """What the next read sees: warm-start (the server's), writing the cache as it does."""
        self.index, pending = warm_start(self.bank, self.index)
        if (
            self.bank.cache is not None
            and self.bank.cache.status == "used"
            and currently_in_test_context()
        ):
            event("served from the cache")  # hypothesis statistics: the property reaches it
            if self.bank.finished_used:
                event("served the finished snapshot")
        if pending is not None and self.bank.cache is not None:
            self.bank.cache.write(pending)
        return self.bank.snapshot, self.index


def fresh(root: Path) -> tuple[Snapshot, SearchIndex]:
    snapshot = Bank(root).refresh()
    index = SearchIndex()
    index.sync(snapshot)
    return snapshot, index


def assert_same_as_fresh(served: tuple[Snapshot, SearchIndex], root: Path) -> None:
    snapshot, index = served
    expected, expected_index = fresh(root)
    assert comparable(snapshot) == comparable(expected)
    # the packed postings (read in place, never made) and the bodies made from the texts
    assert dict(index.postings.items()) == expected_index.postings
    assert index.bodies == expected_index.bodies
    assert answers(snapshot, index) == answers(expected, expected_index)
    # what was left encoded (`LazyDocInfos`) or kept derived (`route_lengths`) is what a build
    # makes; compared after the answers, which must not need it decoded
    assert index.route_lengths() == expected_index.route_lengths()
    assert index.indexed == expected_index.indexed
    assert index.docs == expected_index.docs
    assert index.indexed == {path: info.key for path, info in index.docs.items()}
    for held in ("purpose_postings", "title_postings", "key_postings", "section_postings"):
        assert getattr(index, held) == getattr(expected_index, held), held
    assert index.header_words == expected_index.header_words
    assert index.header_stems == expected_index.header_stems
    assert index.bilingual_pairs() == expected_index.bilingual_pairs()


# --------------------------------------------------------------------------------------------
# The property: any edits, touches, renames, deletes, additions, mtimes back, restarts
# --------------------------------------------------------------------------------------------

NAMES = ("features/a.md", "features/b.md", "adr/c.md", "notes/d.md")
bodies = st.sampled_from(
    [
        "---\ntitle: Alpha\npurpose: The feature registry.\n---\n# Alpha\n\n## Gates\nfeature\n",
        "---\ntitle: Bravo\npurpose: Decision records.\n---\n# Bravo\n\nthe architecture\n",
        "---\ntitle: Bravx\npurpose: Decision records.\n---\n# Bravo\n\nthe architecture\n",
        "# No frontmatter\n\nthe registry of things\n",
        "---\nbroken: [\n---\n# Broken\n",
    ]
)
steps = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), bodies),
    st.tuples(st.just("same-size"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("touch"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("mtime-back"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("restart"), st.just(""), st.just("")),
    st.tuples(st.just("aged-restart"), st.just(""), st.just("")),
)


def apply_step(root: Path, step: tuple[str, str, str]) -> None:
    kind, name, value = step
    target = root / name if name else root
    if kind == "write":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(value, encoding="utf-8")
    elif not target.is_file():
        return
    elif kind == "same-size":
        # The same size and, put back, the same mtime: only ctime (and the racy rule) can tell.
        before = target.stat()
        data = bytearray(target.read_bytes())
        data[-2] = ord("x") if data[-2] != ord("x") else ord("y")
        target.write_bytes(bytes(data))
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif kind == "touch":
        os.utime(target)
    elif kind == "mtime-back":
        before = target.stat().st_mtime_ns
        os.utime(target, ns=(before - 5_000_000_000, before - 5_000_000_000))
    elif kind == "rename":
        destination = root / value
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.replace(target, destination)
    elif kind == "delete":
        target.unlink()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(bodies, min_size=1, max_size=3), st.lists(steps, max_size=8))
def test_a_cached_process_serves_what_a_fresh_build_would(
    first: list[str], sequence: list[tuple[str, str, str]]
) -> None:
    with tempfile.TemporaryDirectory() as work:
        root, directory = Path(work) / "bank", Path(work) / "cache"
        for name, text in zip(NAMES, first, strict=False):
            apply_step(root, ("write", name, text))
        aged()
        process = Process(root, directory)
        assert_same_as_fresh(process.serve(), root)
        for step in sequence:
            if step[0] in ("restart", "aged-restart"):
                if step[0] == "aged-restart":
                    aged()
                process = Process(root, directory)
            else:
                apply_step(root, step)
            assert_same_as_fresh(process.serve(), root)


# --------------------------------------------------------------------------------------------
# The cache really serves, and only what it can prove
# --------------------------------------------------------------------------------------------


def test_a_second_process_reuses_every_document_and_the_index(
    fixture_bank: Path, tmp_path: Path
) -> None:
    aged()
    first = Process(fixture_bank, tmp_path)
    first.serve()
    assert first.bank.cache is not None and first.bank.cache.status == "saved"
    second = Process(fixture_bank, tmp_path)
    served = second.serve()
    assert second.bank.cache is not None and second.bank.cache.status == "used"
    assert second.bank.last_refresh_parsed == 0
    assert second.bank.cache.reused == len(served[0].docs) == 17
    assert second.index.version == 1  # the persisted index, with nothing to re-index
    assert_same_as_fresh(served, fixture_bank)


def test_a_second_process_serves_the_finished_snapshot_without_deriving_it(
    fixture_plus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file unchanged: the snapshot the cache finished is served as it is (nothing is
    parsed or derived again), and it is the snapshot a fresh build makes."""
    saved_cache(fixture_plus, tmp_path)
    second = Process(fixture_plus, tmp_path)

    def derived(*_: object) -> None:
        raise AssertionError("build_snapshot ran on a bank whose every file was unchanged")

    monkeypatch.setattr(snapshot_module, "build_snapshot", derived)
    served = second.serve()
    assert second.bank.finished_used and second.bank.last_refresh_parsed == 0
    assert second.bank.cache is not None and second.bank.cache.reused == len(served[0].docs)
    monkeypatch.undo()
    assert_same_as_fresh(served, fixture_plus)
    assert served[0].docs == build_snapshot_of(second.bank).docs


def build_snapshot_of(bank: Bank) -> Snapshot:
    """The snapshot `build_snapshot` derives from what the bank holds (its documents as the
    snapshot holds them: their layers and registrations derived already)."""
    return build_snapshot(bank.root, bank.real_root, dict(sorted(bank.parsed.items())), 0)


def test_a_snapshot_derived_from_its_own_documents_is_the_same(fixture_plus: Path) -> None:
    """What the cache keeps of a document is the snapshot's (layer and registrations set):
    deriving the snapshot from those again gives the same, so the cache may keep them."""
    bank = Bank(fixture_plus)
    snapshot = bank.refresh()
    again = build_snapshot(
        bank.root,
        bank.real_root,
        {
            path: PersistedFile(path, cached.facts, snapshot.docs[path], cached.text)
            for path, cached in sorted(bank.parsed.items())
        },
        snapshot.generation,
    )
    assert again == snapshot
    assert any(snapshot.docs[path] != cached.doc for path, cached in bank.parsed.items())


def hidden_file(root: Path) -> None:
    (root / ".notes.md").write_text("# Hidden\n", encoding="utf-8")


def other_file(root: Path) -> None:
    (root / "adr" / "diagram.txt").write_text("not markdown\n", encoding="utf-8")


def new_document(root: Path) -> None:
    (root / "adr" / "new.md").write_text("# New\n\nthe feature\n", encoding="utf-8")


def deleted_document(root: Path) -> None:
    (root / "README.md").unlink()


def same_size_edit(root: Path) -> None:
    apply_step(root, ("same-size", "README.md", ""))


def renamed_document(root: Path) -> None:
    os.replace(root / "README.md", root / "adr" / "README.md")


def new_directory_with_a_document(root: Path) -> None:
    (root / "extra").mkdir()
    new_document(root)
    os.replace(root / "adr" / "new.md", root / "extra" / "new.md")


def new_document_times_put_back(root: Path) -> None:
    before = (root / "adr").stat()
    new_document(root)
    os.utime(root / "adr", ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_second_process_lists_no_directory_when_nothing_moved(
    fixture_bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finished snapshot keeps each directory's facts as last listed: a second process
    stats the persisted documents by name and lists nothing."""
    saved_cache(fixture_bank, tmp_path)
    process = Process(fixture_bank, tmp_path)

    def listed(*_: object) -> None:
        raise AssertionError("listed a directory whose facts had not moved")

    with monkeypatch.context() as patched:
        patched.setattr(os, "scandir", listed)
        served = process.serve()
    assert process.bank.finished_used
    assert_same_as_fresh(served, fixture_bank)


@pytest.mark.parametrize(
    ("change", "finished"),
    [
        (new_document_times_put_back, False),
        (hidden_file, True),
        (other_file, True),
        (new_document, False),
        (deleted_document, False),
        (same_size_edit, False),
        (renamed_document, False),
        (new_directory_with_a_document, False),
    ],
)
def test_the_finished_snapshot_is_served_only_when_no_document_moved(
    fixture_bank: Path, tmp_path: Path, change: Any, finished: bool
) -> None:
    saved_cache(fixture_bank, tmp_path)
    change(fixture_bank)
    process = Process(fixture_bank, tmp_path)
    served = process.serve()
    assert process.bank.finished_used is finished
    assert_same_as_fresh(served, fixture_bank)


def test_no_finished_snapshot_is_kept_while_a_document_cannot_be(
    fixture_bank: Path, tmp_path: Path
) -> None:
    """A racy document is not persisted, so the snapshot is not whole in the cache: the next
    process parses that document and derives the maps again (then finishes the cache)."""
    aged()
    (fixture_bank / "adr" / "racy.md").write_text("# Racy\n", encoding="utf-8")
    first = Process(fixture_bank, tmp_path)
    first.serve()
    assert first.bank.finished(first.bank.persisted_files()) is None
    aged()
    second = Process(fixture_bank, tmp_path)
    assert_same_as_fresh(second.serve(), fixture_bank)
    assert not second.bank.finished_used and second.bank.last_refresh_parsed == 1
    third = Process(fixture_bank, tmp_path)
    assert_same_as_fresh(third.serve(), fixture_bank)
    assert third.bank.finished_used


def test_a_changed_file_is_reread_and_the_rest_reused(fixture_bank: Path, tmp_path: Path) -> None:
    aged()
    Process(fixture_bank, tmp_path).serve()
    edited = fixture_bank / "README.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    (fixture_bank / "adr" / "new.md").write_text("# New\n", encoding="utf-8")
    second = Process(fixture_bank, tmp_path)
    served = second.serve()
    assert second.bank.last_refresh_parsed == 2
    assert second.bank.cache is not None and second.bank.cache.reused == 16
    assert_same_as_fresh(served, fixture_bank)


def test_a_file_changed_just_before_it_was_read_is_never_persisted(
    fixture_bank: Path, tmp_path: Path
) -> None:
    aged()
    (fixture_bank / "adr" / "racy.md").write_text("# Racy\n", encoding="utf-8")
    process = Process(fixture_bank, tmp_path)
    process.serve()
    assert "adr/racy.md" in process.bank.snapshot.docs
    assert "adr/racy.md" not in process.bank.persisted_files()
    assert len(process.bank.persisted_files()) == 17


@pytest.mark.parametrize(
    ("ctime_ns", "read_from_ns", "racy"),
    [
        (10**18 + 123_456_789, 10**18 + 123_456_789 + RACY_NS + 1, False),
        (10**18 + 123_456_789, 10**18 + 123_456_789 + RACY_NS, True),
        (10**18 + 123_456_789, 10**18, True),
        # whole seconds on disk (a coarse file system): two seconds more are needed
        (10**18, 10**18 + RACY_NS + 1_000_000_000, True),
        (10**18, 10**18 + RACY_NS + 2_000_000_001, False),
    ],
)
def test_the_racy_rule(ctime_ns: int, read_from_ns: int, racy: bool) -> None:
    assert is_racy(ctime_ns, read_from_ns) is racy


def saved_cache(bank: Path, directory: Path) -> bytes:
    aged()
    Process(bank, directory).serve()
    (written,) = directory.glob("projection-*.bin")
    return written.read_bytes()


def test_a_cache_damaged_or_cut_at_any_byte_is_ignored(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    (bank / "adr").mkdir(parents=True)
    (bank / "adr" / "one.md").write_text("---\ntitle: One\n---\n# One\n\nthe feature\n")
    (bank / "README.md").write_text("# Index\n\n- [One](adr/one.md)\n")
    directory = tmp_path / "cache"
    good = saved_cache(bank, directory)
    (path,) = directory.glob("projection-*.bin")
    for offset in range(len(good)):
        for damaged in (
            good[:offset],
            good[:offset] + bytes([good[offset] ^ 0x5A]) + good[offset + 1 :],
        ):
            path.write_bytes(damaged)
            cache = ProjectionCache(os.path.realpath(bank), "t", str(directory))
            assert cache.files() == {} and cache.index_state() is None, offset
            assert cache.status.startswith("ignored ("), (offset, cache.status)
    path.write_bytes(good)
    assert ProjectionCache(os.path.realpath(bank), "t", str(directory)).files()


@pytest.mark.parametrize("part", [2, 3, 4, 5, 6])
def test_one_index_part_damaged_or_missing_ignores_the_whole_cache(
    fixture_bank: Path, tmp_path: Path, part: int
) -> None:
    """The documents' part is good, the finished snapshot's maps or one part of the index
    state is not: nothing is used (a part is never trusted without the others), the answers
    are a fresh build's, and the cache is written again."""
    good = saved_cache(fixture_bank, tmp_path)
    (path,) = tmp_path.glob("projection-*.bin")
    starts, at = [], len(b"MBANKPC\x03")
    while at < len(good):
        starts.append(at)
        at += 8 + 32 + int.from_bytes(good[at : at + 8], "big")
    # header, documents, the finished snapshot's maps, state, postings ends, ids, counts
    assert len(starts) == 7
    payload = starts[part] + 8 + 32
    damaged = bytearray(good)
    damaged[payload] ^= 0x01
    missing = good[: starts[part]]
    for written, why in ((bytes(damaged), "damaged or truncated"), (missing, "not a cache")):
        path.write_bytes(written)
        cache = ProjectionCache(os.path.realpath(fixture_bank), "t", str(tmp_path))
        assert cache.files() == {} and cache.index_state() is None
        assert cache.status.startswith(f"ignored ({why}"), cache.status
        process = Process(fixture_bank, tmp_path)
        assert_same_as_fresh(process.serve(), fixture_bank)
        assert process.bank.cache is not None and process.bank.cache.status == "saved"
        assert path.read_bytes() == good


def test_a_body_changed_between_route_and_search_is_searched_as_it_is_now(
    fixture_bank: Path, tmp_path: Path
) -> None:
    """Bodies are made from the text the snapshot read, never from an older one: a search
    after an edit finds the new words and not the old ones, in a cached process."""
    saved_cache(fixture_bank, tmp_path)
    process = Process(fixture_bank, tmp_path)
    snapshot, index = process.serve()
    assert process.bank.cache is not None and process.bank.cache.status == "used"
    route(snapshot, index, QUESTIONS[0])
    before = search(snapshot, index, "screened")["results"]  # its body made from the text
    assert "README.md" in [hit["path"] for hit in before]
    target = fixture_bank / "README.md"
    target.write_text("# Index\n\nNothing but a zanzibar here.\n", encoding="utf-8")
    snapshot = process.bank.refresh()
    found = search(snapshot, index, "zanzibar")["results"]
    assert [hit["path"] for hit in found] == ["README.md"]
    after = search(snapshot, index, "screened")["results"]
    assert "README.md" not in [hit["path"] for hit in after]
    assert_same_as_fresh((snapshot, index), fixture_bank)


def test_a_packed_build_is_the_build_sync_makes(fixture_plus: Path) -> None:
    snapshot, expected = fresh(fixture_plus)
    packed = SearchIndex()
    build_packed(packed, snapshot)
    assert isinstance(packed.postings, PackedPostings)
    assert isinstance(packed.bodies, DerivedBodies)
    for field in ("docs", "indexed", "routable", "purpose_postings", "title_postings"):
        assert getattr(packed, field) == getattr(expected, field), field
    for field in ("key_postings", "section_postings", "header_stems", "header_words"):
        assert getattr(packed, field) == getattr(expected, field), field
    assert list(packed.postings) == list(expected.postings)  # the order a build makes
    assert dict(packed.postings.items()) == expected.postings
    assert packed.postings.untouched()  # reading them all made nothing
    assert packed.bodies == expected.bodies
    assert answers(snapshot, packed) == answers(snapshot, expected)
    with pytest.raises(ValueError, match="empty index"):
        build_packed(packed, snapshot)


def test_packed_postings_behave_as_the_dict_they_stand_for(fixture_bank: Path) -> None:
    snapshot, expected = fresh(fixture_bank)
    packed = SearchIndex()
    build_packed(packed, snapshot)
    postings, plain = packed.postings, expected.postings
    token = next(iter(plain))
    assert isinstance(postings, PackedPostings)
    assert postings.pending(token) is not None
    assert token in postings and len(postings) == len(plain)
    assert postings.get("no-such-token") is None and postings.get("no-such-token", {}) == {}
    assert postings[token] == plain[token] and postings.pending(token) is None  # made, kept
    postings[token]["extra.md"] = 3  # an edit of a made value sticks
    assert postings.get(token, {})["extra.md"] == 3
    assert not postings.untouched()
    assert postings.setdefault("new-token", {"a.md": 1}) == {"a.md": 1}
    second = list(plain)[1]
    assert postings.pop(second) == plain[second] and second not in postings
    assert postings.pop(second, None) is None
    with pytest.raises(KeyError):
        postings["no-such-token"]
    assert repr(postings) == f"PackedPostings({len(postings)} keys)"


def test_a_damaged_cache_changes_no_answer_and_is_rebuilt(
    fixture_bank: Path, tmp_path: Path
) -> None:
    good = saved_cache(fixture_bank, tmp_path)
    (path,) = tmp_path.glob("projection-*.bin")
    path.write_bytes(good[: len(good) // 2])
    process = Process(fixture_bank, tmp_path)
    assert_same_as_fresh(process.serve(), fixture_bank)
    assert process.bank.cache is not None and process.bank.cache.status == "saved"
    assert path.read_bytes() != good[: len(good) // 2]


def test_a_cache_of_another_version_or_bank_is_ignored(fixture_bank: Path, tmp_path: Path) -> None:
    good = saved_cache(fixture_bank, tmp_path)
    (path,) = tmp_path.glob("projection-*.bin")
    other = ProjectionCache(os.path.realpath(fixture_bank), "other", str(tmp_path))
    Path(other.path).write_bytes(good)  # another version's file name, this version's content
    assert other.files() == {}
    assert other.status == "ignored (written by another version of mbank or for another bank)"
    moved = ProjectionCache("/elsewhere", "t", str(tmp_path))
    Path(moved.path).write_bytes(good)
    assert moved.files() == {} and moved.status.startswith("ignored (")
    assert path.read_bytes() == good


def test_where_the_cache_lives_and_how_it_is_switched_off(tmp_path: Path) -> None:
    assert cache_directory({"XDG_CACHE_HOME": str(tmp_path), "HOME": "/h"}) == f"{tmp_path}/mbank"
    assert cache_directory({"XDG_CACHE_HOME": "relative", "HOME": "/h"}) == "/h/.cache/mbank"
    assert cache_directory({"HOME": "/h"}) == "/h/.cache/mbank"
    assert switched_off({"MBANK_NO_CACHE": "1"}) and switched_off({"MBANK_NO_CACHE": "yes"})
    assert not switched_off({"MBANK_NO_CACHE": "0"}) and not switched_off({})
    assert cache_for("/bank", {"MBANK_NO_CACHE": "1", "HOME": "/h"}) is None
    found = cache_for("/bank", {"XDG_CACHE_HOME": str(tmp_path)})
    assert found is not None and found.path.startswith(f"{tmp_path}/mbank/projection-")


# --------------------------------------------------------------------------------------------
# Real processes
# --------------------------------------------------------------------------------------------


def route_over_stdio(root: Path, env: dict[str, str]) -> dict[str, Any]:
    with ServerProcess(["--root", str(root)], env=env) as server:
        server.initialize()
        return server.request(
            "tools/call", {"name": "bank_route", "arguments": {"question": QUESTIONS[0]}}
        )


def stats(root: Path, env: dict[str, str], *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "mbank", *flags, "--root", str(root), "--json", "stats"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)["projectionCache"]
    return found


@pytest.mark.stdio
@pytest.mark.slow
def test_two_servers_starting_together_both_answer_and_leave_a_good_cache(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    bank = copy_fixture(tmp_path / "bank", overlay=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    aged()
    expected = route_over_stdio(bank, {**env, "MBANK_NO_CACHE": "1"})
    assert not (tmp_path / "xdg").exists()
    with assert_unchanged(bank):
        servers = [ServerProcess(["--root", str(bank)], env=env) for _ in range(2)]
        try:
            for server in servers:
                server.initialize()
            question = {"name": "bank_route", "arguments": {"question": QUESTIONS[0]}}
            answered = [server.request("tools/call", question) for server in servers]
        finally:
            for server in servers:
                server.close()
        assert answered == [expected, expected]
        assert stats(bank, env)["used"] is True
        assert route_over_stdio(bank, env) == expected
    assert stats(bank, env) == {"used": True, "status": "used", "reused": 25}
    assert stats(bank, env, "--no-cache")["status"] == "off"
    assert stats(bank, {**env, "MBANK_NO_CACHE": "1"})["status"] == "off"
    assert len(list((tmp_path / "xdg" / "mbank").iterdir())) == 1  # no temporary left behind


def test_frontmatter_values_travel_exactly_or_the_document_is_reparsed() -> None:
    import datetime as dt

    from mbank.parse import parse_text
    from mbank.projection_cache import PersistedFile, _from_extension, portable_doc

    doc = parse_text("a.md", "---\ntitle: A\n---\n# A\n")
    values = {
        "day": dt.date(2026, 3, 2),
        "when": dt.datetime(2026, 3, 2, 10, 30, 5, 123, tzinfo=dt.timezone(dt.timedelta(hours=3))),
        "naive": dt.datetime(2026, 3, 2, 10, 30),
        "clock": dt.time(10, 30),
        "nested": [{"day": dt.date(2026, 1, 1)}, b"\x00bytes", None, 1.5, True, 2**63],
    }
    original = msgspec.structs.replace(doc, data=values)
    kept = portable_doc(original)
    assert kept is not None
    entry = PersistedFile("a.md", (1, 2, 3, 4, 5), kept, "x")
    decoder = msgspec.msgpack.Decoder(PersistedFile, ext_hook=_from_extension)
    assert decoder.decode(msgspec.msgpack.encode(entry)).doc == original
    for unportable in ({"t": (1, 2)}, {"s": {1, 2}}, {"huge": 2**64}, {"deep": [{"x": {3}}]}):
        assert portable_doc(msgspec.structs.replace(doc, data=unportable)) is None


def test_the_index_state_comes_back_as_it_was_built(fixture_plus: Path) -> None:
    bank = Bank(fixture_plus)
    snapshot = bank.refresh()
    index = SearchIndex()
    index.sync(snapshot)
    index.route_forms()
    assert index_from_state(export_state(index)) is None  # no text to make the bodies from
    loaded = index_from_state(export_state(index), bank.parsed)
    assert loaded is not None
    built = ("postings", "indexed", "bodies", "docs", "routable", "purpose_postings")
    built += ("title_postings", "key_postings", "section_postings", "header_stems")
    for field in (*built, "header_words", "form_of"):
        assert getattr(loaded, field) == getattr(index, field), field
    assert loaded.sorted_tokens() == index.sorted_tokens()
    for key in ("postings", "key_postings", "bodies"):  # the order a build made, kept
        assert list(getattr(loaded, key)) == list(getattr(index, key))
    assert loaded.sync(snapshot) == 0
    assert answers(snapshot, loaded) == answers(snapshot, index)
    assert index_from_state([b"\x93\x01\x02\x03", b"", b"", b""], bank.parsed) is None


def test_a_second_process_decodes_only_the_headers_its_reads_use(
    fixture_plus: Path, tmp_path: Path
) -> None:
    """The persisted `DocInfo`s stay encoded until asked for: a route decodes those of its
    candidates, and a state written back with some still encoded is the same state."""
    saved_cache(fixture_plus, tmp_path)
    process = Process(fixture_plus, tmp_path)
    snapshot, index = process.serve()
    docs = index.docs
    assert isinstance(docs, LazyDocInfos)
    encoded = [path for path in docs if docs.pending(path) is not None]
    assert len(encoded) == len(snapshot.docs)  # the warm-up decoded none
    route(snapshot, index, QUESTIONS[0])
    still = [path for path in docs if docs.pending(path) is not None]
    assert 0 < len(still) < len(encoded)
    again = index_from_state(export_state(index), process.bank.parsed)
    assert again is not None and again.docs == fresh(fixture_plus)[1].docs
    assert docs.get("no-such.md") is None and docs.pop("no-such.md", None) is None
    path = still[0]
    assert docs.setdefault(path, None) == docs[path] and docs.pending(path) is None
    assert docs.pop(path) == fresh(fixture_plus)[1].docs[path] and path not in docs


MIXED_HEADERS = (
    ("Release Steps", "Шаги релиза продукта"),
    ("Release Checks", "Проверки релиза"),
    ("Release Owners", "Владельцы релиза"),
    ("Deploy Steps", "Шаги деплоя"),
    ("Deploy Checks", "Проверки деплоя"),
    ("Deploy Owners", "Владельцы деплоя"),
    ("Backup Policy", "Политика бэкапов"),
    ("Backup Window", "Окно бэкапов"),
)


def test_a_second_process_answers_russian_with_the_pairs_the_first_mined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bank's mined Russian → English pairs travel with the index: a second session's
    first Russian question does not mine every header again (a third of a second at 10,000
    documents), and it is answered with the pairs a fresh build mines."""
    import mbank.search as search_module

    bank = tmp_path / "bank"
    for number, (title, purpose) in enumerate(MIXED_HEADERS):
        document = f"---\ntitle: {title}\npurpose: {purpose}\n---\n# {title}\n\nSteps.\n"
        (bank / f"f{number}").mkdir(parents=True)
        (bank / f"f{number}" / "a.md").write_text(document, encoding="utf-8")
    saved_cache(bank, tmp_path / "cache")

    def mined(*_: object) -> None:
        raise AssertionError("a second session mined the pairs the cache holds")

    monkeypatch.setattr(search_module, "mine_pairs", mined)
    served = Process(bank, tmp_path / "cache").serve()
    pairs = served[1].bilingual_pairs()
    assert pairs == {"депло": ("deploy",), "релиз": ("release",)}
    answer = route(served[0], served[1], "где описан релиз?")
    monkeypatch.undo()
    assert pairs == fresh(bank)[1].bilingual_pairs()
    assert answer == route(*fresh(bank), "где описан релиз?")


def cli_route(root: Path, env: dict[str, str], question: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "mbank", "--root", str(root), "--json", "route", question],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_the_cli_s_route_and_search_use_and_leave_the_cache_and_see_every_change(
    tmp_path: Path, assert_unchanged: Any
) -> None:
    """`mbank route` and `mbank search` take the index from the projection cache and write it
    back when anything moved, as a server's warm-up does (they rebuilt it every time: 8 s at
    10,000 documents); the answers are those with the cache off, before and after an edit."""
    bank = copy_fixture(tmp_path / "bank", overlay=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    off = {**env, "MBANK_NO_CACHE": "1"}
    aged()
    expected = cli_route(bank, off, QUESTIONS[1])
    with assert_unchanged(bank):
        assert cli_route(bank, env, QUESTIONS[1]) == expected
    assert stats(bank, env) == {"used": True, "status": "used", "reused": 25}
    assert cli_route(bank, env, QUESTIONS[1]) == expected
    owner = bank / expected["results"][0]["path"]
    owner.write_text(owner.read_text(encoding="utf-8") + "\nA zanzibar gate.\n", encoding="utf-8")
    question = "where is the zanzibar gate"
    assert cli_route(bank, env, question) == cli_route(bank, off, question)
    found = subprocess.run(
        [sys.executable, "-m", "mbank", "--root", str(bank), "--json", "search", "zanzibar"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert [hit["path"] for hit in json.loads(found.stdout)["results"]] == [
        expected["results"][0]["path"]
    ]
