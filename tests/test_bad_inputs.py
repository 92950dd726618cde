"""Hostile inputs to the tools (spec 07 §4.3): every path parameter of every tool, scopes,
content files, non-text and BOM/CRLF documents, a 20 MB document, huge lines and headings.

Each case gets a named refusal with the spec's exact text, or an answer, and nothing is lost:
every refusal runs inside `assert_unchanged` (`.mbank/` included, so a refused write leaves
no trace). Parsing, the walk and `Bank.relative` alone are in `test_bad_inputs_parse.py`; the
10,000-row tables through registration, edit and update_section are in their tools' tests.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import write_calls
from fixture_banks import copy_fixture
from planners import Clock, Ids

from mbank.drift import drift
from mbank.graph import graph
from mbank.model import RefusalError
from mbank.read import PathLookup, read
from mbank.route import route
from mbank.search import SearchIndex, search
from mbank.snapshot import Bank
from mbank.validate import validate

Unchanged = Callable[[Path], AbstractContextManager[None]]
Call = Callable[[Bank, str], Any]

# A tripwire against quadratic behaviour, not a benchmark (07 §4.3).
WALL_CLOCK_GUARD_S = 10.0

NOTE = "_inbox/note.md"
NOTE_TEXT = (
    "---\ntitle: Note\ndoc_kind: domain\npurpose: A captured note.\nstatus: draft\n---\n"
    "# Note\n\n## Body\n\nCaptured.\n"
)


@contextmanager
def within_guard() -> Iterator[None]:
    started = time.monotonic()
    yield
    assert time.monotonic() - started < WALL_CLOCK_GUARD_S


def engine(bank: Bank) -> dict[str, Any]:
    return {"clock": Clock(), "make_id": Ids(), "cwd": str(Path(bank.root).parent)}


def relative(bank: Bank) -> Callable[[str], str]:
    return lambda given: bank.relative(given, bank.snapshot)


def refusal_of(call: Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(RefusalError) as caught:
        call()
    return caught.value.refusal.rule, caught.value.refusal.message


@pytest.fixture(scope="module")
def shared_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fixture-bank copy with an inbox note, for the refusal tables (they write nothing,
    and each checks so)."""
    root = copy_fixture(tmp_path_factory.mktemp("hostile") / "bank", overlay=False)
    (root / "_inbox").mkdir()
    (root / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    sibling = root.parent / "bankX"
    sibling.mkdir()
    (sibling / "x.md").write_text("# Outside\n", encoding="utf-8")
    return root


# --------------------------------------------------------------------------------------------
# Every path parameter of every tool
# --------------------------------------------------------------------------------------------

# What each tool gets besides the path under test: arguments that pass every other gate, so
# the path's refusal is the one that answers.
PATH_PARAMETERS: dict[str, Call] = {
    "read": lambda bank, p: read(bank.refresh(), p, lookup=PathLookup(relative(bank))),
    "graph": lambda bank, p: graph(bank.refresh(), p, lookup=PathLookup(relative(bank))),
    "create": lambda bank, p: write_calls.create(
        bank,
        {"path": p, "docKind": "domain", "title": "T", "purpose": "P.", "status": "draft"},
        **engine(bank),
    ),
    "edit": lambda bank, p: write_calls.edit(
        bank, {"path": p, "find": "a", "replace": "b"}, **engine(bank)
    ),
    "update_section": lambda bank, p: write_calls.update_section(
        bank, {"path": p, "section": "Body", "content": "c"}, **engine(bank)
    ),
    "rewrite": lambda bank, p: write_calls.rewrite(
        bank, {"path": p, "body": "# X\n"}, **engine(bank)
    ),
    "set_status": lambda bank, p: write_calls.set_status(
        bank, {"path": p, "status": "active"}, **engine(bank)
    ),
    "set_field": lambda bank, p: write_calls.set_field(
        bank, {"path": p, "field": "owner", "value": "x"}, **engine(bank)
    ),
    "promote.path": lambda bank, p: write_calls.promote(
        bank, {"path": p, "to": "domain/promoted.md"}, **engine(bank)
    ),
    "promote.to": lambda bank, p: write_calls.promote(
        bank, {"path": NOTE, "to": p}, **engine(bank)
    ),
    "discard": lambda bank, p: write_calls.discard(
        bank, {"path": p, "reason": "A duplicate."}, **engine(bank)
    ),
}

OUTSIDE = "Path must stay inside the bank: {}"
BACKSLASH = 'Path contains a backslash; bank paths use "/": {}'
NUL = "Path contains a NUL character."
EMPTY = "`path` is required."
TOO_LONG = "Path has a segment longer than 255 bytes: {}…"

# (given, rule, message); `{sibling}` stands for `<tmp>/bankX/x.md` beside the root `<tmp>/bank`.
REFUSED_EVERYWHERE = [
    ("../x.md", "path-outside", OUTSIDE),
    ("a/../../x.md", "path-outside", OUTSIDE),
    ("./../x.md", "path-outside", OUTSIDE),
    ("_inbox/../../x.md", "path-outside", OUTSIDE),
    ("memory_bank/../../x.md", "path-outside", OUTSIDE),
    ("/etc/passwd", "path-outside", OUTSIDE),
    ("/etc/x.md", "path-outside", OUTSIDE),
    ("/", "path-outside", OUTSIDE),
    ("{sibling}", "path-outside", OUTSIDE),
    ("..\\x.md", "path-backslash", BACKSLASH),
    ("dir\\x.md", "path-backslash", BACKSLASH),
    ("C:\\x.md", "path-backslash", BACKSLASH),
    ("x.md\x00.txt", "path-nul", NUL),
    ("\x00", "path-nul", NUL),
    ("", "path-empty", EMPTY),
    ("   ", "path-empty", EMPTY),
    ("a" * 256, "path-segment-too-long", TOO_LONG.format("a" * 40)),
    ("domain/" + "a" * 253 + ".md", "path-segment-too-long", TOO_LONG.format("a" * 40)),
    ("д" * 128 + "/x.md", "path-segment-too-long", TOO_LONG.format("д" * 40)),
]


@pytest.mark.parametrize("parameter", list(PATH_PARAMETERS))
@pytest.mark.parametrize(
    ("given", "rule", "message"),
    REFUSED_EVERYWHERE,
    ids=[repr(case[0])[:24] for case in REFUSED_EVERYWHERE],
)
def test_every_path_parameter_refuses_a_hostile_path_with_the_exact_text(
    shared_bank: Path,
    assert_unchanged: Unchanged,
    parameter: str,
    given: str,
    rule: str,
    message: str,
) -> None:
    given = given.replace("{sibling}", str(shared_bank.parent / "bankX" / "x.md"))
    bank = Bank(shared_bank)
    with assert_unchanged(shared_bank):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, given))
    assert found == (rule, message.format(given))


NOT_A_DOCUMENT_TARGETS = [
    ".",
    "domain",
    "x.MD",
    "x.md /",
    ".mbank/journal.jsonl",
    ".git/config.md",
    ".obsidian/x.md",
    "node_modules/x.md",
    "%2e%2e/x.md",
]
EXISTING_DOCUMENT_PARAMETERS = [
    name for name in PATH_PARAMETERS if name not in ("create", "promote.to")
]


@pytest.mark.parametrize("parameter", EXISTING_DOCUMENT_PARAMETERS)
@pytest.mark.parametrize("given", NOT_A_DOCUMENT_TARGETS)
def test_a_name_that_is_no_document_is_not_a_document_of_this_bank(
    shared_bank: Path, assert_unchanged: Unchanged, parameter: str, given: str
) -> None:
    (shared_bank / ".git").mkdir(exist_ok=True)
    (shared_bank / ".git" / "config.md").write_text("# not indexed\n", encoding="utf-8")
    (shared_bank / "node_modules").mkdir(exist_ok=True)
    (shared_bank / "node_modules" / "x.md").write_text("# not indexed\n", encoding="utf-8")
    bank = Bank(shared_bank)
    with assert_unchanged(shared_bank):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, given))
    assert found == ("not-a-document", f"Not a document of this bank: {given}")


NEW_PATH_CASES = [
    ("domain", "path-not-md", "Path must end in .md: domain"),
    ("x.MD", "path-not-md", "Path must end in .md: x.MD"),
    # Only the whole path is stripped: the segment `x.md ` keeps its trailing space.
    ("x.md /", "path-not-md", "Path must end in .md: x.md "),
    # `path-not-md` is checked before the hidden name.
    (".mbank/journal.jsonl", "path-not-md", "Path must end in .md: .mbank/journal.jsonl"),
    (
        ".git/config.md",
        "path-hidden",
        "Path goes through a hidden (dot) name, which the bank does not index: .git/config.md",
    ),
    (
        ".obsidian/x.md",
        "path-hidden",
        "Path goes through a hidden (dot) name, which the bank does not index: .obsidian/x.md",
    ),
    (
        "node_modules/x.md",
        "path-skipped-dir",
        'Path goes through "node_modules/", which the bank does not index: node_modules/x.md',
    ),
    (
        "domain/dist/x.md",
        "path-skipped-dir",
        'Path goes through "dist/", which the bank does not index: domain/dist/x.md',
    ),
]


@pytest.mark.parametrize("parameter", ["create", "promote.to"])
@pytest.mark.parametrize(("given", "rule", "message"), NEW_PATH_CASES)
def test_a_new_document_path_the_walk_could_not_see_is_refused(
    shared_bank: Path,
    assert_unchanged: Unchanged,
    parameter: str,
    given: str,
    rule: str,
    message: str,
) -> None:
    bank = Bank(shared_bank)
    with assert_unchanged(shared_bank):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, given))
    assert found == (rule, message)


@pytest.mark.parametrize("parameter", ["create", "promote.to"])
def test_a_path_of_only_dots_is_empty_for_a_new_document(
    shared_bank: Path, assert_unchanged: Unchanged, parameter: str
) -> None:
    bank = Bank(shared_bank)
    with assert_unchanged(shared_bank):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, "."))
    assert found == ("path-empty", EMPTY)


@pytest.mark.parametrize(
    "name", ["d" * 252 + ".md", "д" * 126 + ".md"], ids=["ascii-255", "cyrillic-255"]
)
def test_a_segment_of_exactly_255_bytes_is_created(fixture_bank: Path, name: str) -> None:
    assert len(name.encode()) == 255
    bank = Bank(fixture_bank)
    result = PATH_PARAMETERS["create"](bank, f"domain/{name}")
    assert result["path"] == f"domain/{name}"
    assert (fixture_bank / "domain" / name).is_file()


def test_percent_encoding_is_taken_literally(fixture_bank: Path) -> None:
    bank = Bank(fixture_bank)
    result = PATH_PARAMETERS["create"](bank, "%2e%2e/x.md")
    assert result["path"] == "%2e%2e/x.md"
    assert (fixture_bank / "%2e%2e" / "x.md").is_file()
    assert not (fixture_bank.parent / "x.md").exists()


# --------------------------------------------------------------------------------------------
# Symbolic links
# --------------------------------------------------------------------------------------------


@pytest.fixture
def linked_bank(fixture_bank: Path, tmp_path: Path) -> Path:
    """The fixture bank with a directory symlink leaving it and two `.md` symlinks."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(
        "---\ntitle: Secret\npurpose: Outside.\n---\n# Secret\n", encoding="utf-8"
    )
    os.symlink(outside, fixture_bank / "escape")
    os.symlink(outside / "secret.md", fixture_bank / "domain" / "leak.md")
    os.symlink(fixture_bank / "domain" / "rules.md", fixture_bank / "domain" / "alias.md")
    return fixture_bank


def test_the_walk_skips_every_symlink(linked_bank: Path) -> None:
    docs = Bank(linked_bank).refresh().docs
    assert not any(path.startswith("escape/") for path in docs)
    assert "domain/leak.md" not in docs and "domain/alias.md" not in docs


@pytest.mark.parametrize("given", ["escape/secret.md", "domain/leak.md", "domain/alias.md"])
@pytest.mark.parametrize("parameter", ["read", "graph", "edit", "set_field", "discard"])
def test_a_path_through_a_symlink_is_not_a_document(
    linked_bank: Path, assert_unchanged: Unchanged, parameter: str, given: str
) -> None:
    bank = Bank(linked_bank)
    with assert_unchanged(linked_bank):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, given))
    assert found == ("not-a-document", f"Not a document of this bank: {given}")


@pytest.mark.parametrize("parameter", ["create", "promote.to"])
def test_a_new_document_through_a_directory_symlink_leaving_the_bank_is_refused(
    linked_bank: Path, assert_unchanged: Unchanged, parameter: str
) -> None:
    (linked_bank / "_inbox").mkdir()
    (linked_bank / NOTE).write_text(NOTE_TEXT, encoding="utf-8")
    bank = Bank(linked_bank)
    with assert_unchanged(linked_bank.parent):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, "escape/new.md"))
    assert found == (
        "path-symlink",
        "Path leads outside the bank through a symbolic link: escape/new.md",
    )


# --------------------------------------------------------------------------------------------
# The same strings as a scope: not a refusal, nothing in scope
# --------------------------------------------------------------------------------------------

# "/" is left out on purpose: 02 §7.1 strips a leading "/", so scope "/" is the whole bank.
HOSTILE_SCOPES = [
    "../x.md",
    "a/../../x.md",
    "./../x.md",
    "_inbox/../../x.md",
    "memory_bank/../../x.md",
    "../domain",
    "/etc/passwd",
    "/etc/x.md",
    "/etc",
    "..\\x.md",
    "dir\\x.md",
    "C:\\x.md",
    "x.md\x00.txt",
    "\x00",
]


@pytest.mark.parametrize("scope", HOSTILE_SCOPES, ids=[repr(s)[:24] for s in HOSTILE_SCOPES])
def test_a_hostile_scope_puts_no_document_in_scope(
    shared_bank: Path, assert_unchanged: Unchanged, scope: str
) -> None:
    bank = Bank(shared_bank)
    with assert_unchanged(shared_bank):
        snapshot = bank.refresh()
        validated = validate(snapshot, scope=scope)
        drifted = drift(snapshot, scope=scope)
    assert validated == {"total": 0, "errors": 0, "warnings": 0, "byRule": {}, "findings": []}
    assert (drifted["mode"], drifted["anchored"], drifted["unanchored"]) == ("none", 0, 0)
    assert (drifted["drifted"], drifted["missing"]) == ([], [])


def test_a_sibling_directory_sharing_the_roots_prefix_is_no_scope(
    shared_bank: Path, assert_unchanged: Unchanged
) -> None:
    scope = str(shared_bank.parent / "bankX")
    with assert_unchanged(shared_bank):
        snapshot = Bank(shared_bank).refresh()
        assert validate(snapshot, scope=scope)["total"] == 0
        assert drift(snapshot, scope=scope)["unanchored"] == 0


# --------------------------------------------------------------------------------------------
# bodyFile / contentFile
# --------------------------------------------------------------------------------------------

# tool → (call with the file argument, the `<what>` of its messages)
FileCall = Callable[[Bank, dict[str, Any]], Any]
FILE_TOOLS: dict[str, tuple[FileCall, str]] = {
    "create": (
        lambda bank, extra: write_calls.create(
            bank,
            {
                "path": "domain/from-file.md",
                "docKind": "domain",
                "title": "From A File",
                "purpose": "Written from a file.",
                "status": "draft",
                **extra,
            },
            **engine(bank),
        ),
        "body",
    ),
    "rewrite": (
        lambda bank, extra: write_calls.rewrite(
            bank, {"path": "domain/rules.md", **extra}, **engine(bank)
        ),
        "body",
    ),
    "update_section": (
        lambda bank, extra: write_calls.update_section(
            bank,
            {"path": "domain/rules.md", "section": "Thresholds", **extra},
            **engine(bank),
        ),
        "content",
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project holding a bank (`<project>/bank`) and every hostile file of the table."""
    base = tmp_path_factory.mktemp("files")
    root = copy_fixture(base / "project" / "bank", overlay=False)
    project = root.parent
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "body.md").write_text("## Rules\n\nFrom elsewhere.\n", encoding="utf-8")
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (project / ".cache").mkdir()
    (project / ".cache" / "body.md").write_text("cached\n", encoding="utf-8")
    (project / ".env").write_text("SECRET=1\n", encoding="utf-8")
    os.symlink(elsewhere / "body.md", project / "link.md")
    (project / "folder").mkdir()
    os.mkfifo(project / "pipe.md")
    (project / "big.md").write_bytes(b"x" * 1_000_001)
    (project / "latin.md").write_bytes("Café\n".encode("latin-1"))
    (project / "fine.md").write_text("## Rules\n\nFrom a file.\n", encoding="utf-8")
    return project


def file_cases(project: Path, what: str) -> list[tuple[dict[str, Any], str, str]]:
    """`(extra arguments, rule, message)` per row of the table, for `<what>File`."""
    key = f"{what}File"
    outside = str(project.parent / "elsewhere" / "body.md")

    def label(given: str) -> str:
        return f'{key} "{given}"'

    hidden = "Files under .git/, other dot-directories and dot-files are never read."
    return [
        (
            {key: "/etc/passwd"},
            "file-outside",
            f"{label('/etc/passwd')} is outside this project ({project}). Only files inside "
            "the project can be read.",
        ),
        (
            {key: outside},
            "file-outside",
            f"{label(outside)} is outside this project ({project}). Only files inside the "
            "project can be read.",
        ),
        (
            {key: ".git/config"},
            "file-hidden",
            f"{label('.git/config')} is inside a hidden name (.git). {hidden}",
        ),
        (
            {key: ".cache/body.md"},
            "file-hidden",
            f"{label('.cache/body.md')} is inside a hidden name (.cache). {hidden}",
        ),
        ({key: ".env"}, "file-hidden", f"{label('.env')} is inside a hidden name (.env). {hidden}"),
        (
            {key: "link.md"},
            "file-symlink",
            f"{label('link.md')} leads outside this project through a symbolic link.",
        ),
        ({key: "folder"}, "file-not-regular", f"{label('folder')} is not a regular file."),
        ({key: "pipe.md"}, "file-not-regular", f"{label('pipe.md')} is not a regular file."),
        (
            {key: "big.md"},
            "file-too-large",
            f"{label('big.md')} is 1000001 bytes, past the 1000000 this accepts. Split it, or "
            "write the document in sections.",
        ),
        ({key: "latin.md"}, "file-not-utf8", f"{label('latin.md')} is not UTF-8 text."),
        (
            {key: "fine\x00.md"},
            "file-nul",
            f"{label('fine' + chr(0) + '.md')} contains a NUL character.",
        ),
        (
            {key: "fine.md", what: "## Rules\n\nInline.\n"},
            "file-both",
            f"Pass either {what} or {what}File, not both.",
        ),
    ]


FILE_ROWS = [
    "etc-passwd",
    "outside-the-project",
    "git-config",
    "other-dot-directory",
    "dot-env",
    "symlink-leaving",
    "directory",
    "fifo",
    "too-large",
    "not-utf8",
    "nul-in-name",
    "both",
]


@pytest.mark.parametrize("row", range(len(FILE_ROWS)), ids=FILE_ROWS)
@pytest.mark.parametrize("tool", list(FILE_TOOLS))
def test_a_hostile_content_file_is_refused_with_the_exact_text(
    project: Path, assert_unchanged: Unchanged, tool: str, row: int
) -> None:
    call, what = FILE_TOOLS[tool]
    extra, rule, message = file_cases(project, what)[row]
    bank = Bank(project / "bank")
    started = time.monotonic()
    with assert_unchanged(project):
        found = refusal_of(lambda: call(bank, extra))
    assert found == (rule, message)
    assert time.monotonic() - started < WALL_CLOCK_GUARD_S  # the FIFO was never opened to read


@pytest.mark.parametrize("tool", list(FILE_TOOLS))
def test_a_plain_file_inside_the_project_is_read(tmp_path: Path, tool: str) -> None:
    root = copy_fixture(tmp_path / "bank", overlay=False)
    (tmp_path / "fine.md").write_text("## Rules\n\nFrom a file.\n", encoding="utf-8")
    call, what = FILE_TOOLS[tool]
    result = call(Bank(root), {f"{what}File": "fine.md"})
    assert result["dryRun"] is False and "journalId" in result


# --------------------------------------------------------------------------------------------
# Non-text documents; BOM and CRLF
# --------------------------------------------------------------------------------------------

NON_TEXT = {
    "latin-1": "---\ntitle: Café\ndoc_kind: domain\n---\n# Café\n\n## Body\n\nCafé.\n".encode(
        "latin-1"
    ),
    "utf-16": "---\ntitle: x\ndoc_kind: domain\n---\n# x\n\n## Body\n\nx.\n".encode("utf-16"),
    "binary": bytes(range(256)) * 16,
}
EDITING_WRITES = ["edit", "update_section", "rewrite", "set_status", "set_field"]


@pytest.mark.parametrize("encoding", list(NON_TEXT))
@pytest.mark.parametrize("parameter", [*EDITING_WRITES, "promote.path", "read"])
def test_a_non_text_document_is_never_read_or_written_through(
    fixture_bank: Path, assert_unchanged: Unchanged, encoding: str, parameter: str
) -> None:
    path = "_inbox/odd.md" if parameter == "promote.path" else "domain/odd.md"
    (fixture_bank / path).parent.mkdir(exist_ok=True)
    (fixture_bank / path).write_bytes(NON_TEXT[encoding])
    bank = Bank(fixture_bank)
    doc = bank.refresh().docs[path]
    assert doc.parse_error_kind == "invalid-encoding"
    with assert_unchanged(fixture_bank):
        found = refusal_of(lambda: PATH_PARAMETERS[parameter](bank, path))
    if parameter == "read":
        assert found == (
            "not-text",
            f"{path} is not UTF-8 text, so it cannot be read through mbank.",
        )
    else:
        assert found == ("not-text", f"{path} is not UTF-8 text, so mbank does not write to it.")
    assert len(bank.refresh().docs) == len(Bank(fixture_bank).refresh().docs)


@pytest.mark.parametrize("encoding", list(NON_TEXT))
def test_a_non_text_inbox_note_may_be_discarded(fixture_bank: Path, encoding: str) -> None:
    (fixture_bank / "_inbox").mkdir()
    (fixture_bank / "_inbox" / "odd.md").write_bytes(NON_TEXT[encoding])
    result = PATH_PARAMETERS["discard"](Bank(fixture_bank), "_inbox/odd.md")
    assert result["dryRun"] is False
    assert not (fixture_bank / "_inbox" / "odd.md").exists()


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            write_calls.set_field,
            {"field": "owner", "value": "platform"},
            b"owner: platform\r\n",
        ),
        (
            write_calls.edit,
            {"find": "L1 rejects below 60.", "replace": "L1 rejects below 50."},
            b"L1 rejects below 50. A job",
        ),
    ],
    ids=["set_field", "edit"],
)
def test_a_bom_crlf_document_stays_bom_and_crlf_after_a_write(
    tmp_path: Path, tool: Any, arguments: dict[str, Any], expected: bytes
) -> None:
    root = copy_fixture(tmp_path / "bank", overlay=False)
    target = root / "domain" / "rules.md"
    plain = target.read_bytes()
    target.write_bytes(BOM + plain.replace(b"\n", b"\r\n"))
    bank = Bank(root)
    before = bank.refresh().docs["domain/rules.md"]
    tool(bank, {"path": "domain/rules.md", **arguments}, **engine(bank))
    after = target.read_bytes()
    assert after.startswith(BOM + b"---\r\n")
    assert after.count(b"\n") == after.count(b"\r\n")  # no bare LF anywhere
    assert expected in after
    doc = Bank(root).refresh().docs["domain/rules.md"]
    assert doc.parse_error is None and doc.title == before.title


# --------------------------------------------------------------------------------------------
# Size: a 20 MB document; 10,000 headings; a 1 MB line; long questions
# --------------------------------------------------------------------------------------------


def test_a_20_mb_document_is_read_truncated_and_searched_and_validated(
    fixture_bank: Path,
) -> None:
    paragraph = "## Part\n\n" + "word " * 2_000 + "\n\n"
    body = paragraph * (20_000_000 // len(paragraph))
    text = (
        "---\ntitle: Huge\ndoc_kind: engineering\npurpose: A very large document.\n"
        "status: draft\n---\n# Huge\n\n" + body
    )
    (fixture_bank / "engineering" / "huge.md").write_text(text, encoding="utf-8")
    bank = Bank(fixture_bank)
    with within_guard():
        snapshot = bank.refresh()
    assert "engineering/huge.md" in snapshot.docs
    with within_guard():
        result = read(snapshot, "engineering/huge.md", lookup=PathLookup(relative(bank)))
    assert result["truncated"] is True
    assert len(result["content"]) == 400_000
    assert result["bytes"] == len(result["content"].encode("utf-8"))
    with within_guard():
        found = search(snapshot, SearchIndex(), "word")
    assert "engineering/huge.md" in [hit["path"] for hit in found["results"]]
    with within_guard():
        validated = validate(snapshot)
    assert validated["total"] >= 1
    assert (
        read(snapshot, "domain/rules.md", lookup=PathLookup(relative(bank)))["truncated"] is False
    )


def test_10000_headings_and_a_1_mb_line_are_read_and_routed(fixture_bank: Path) -> None:
    head = "---\ntitle: {title}\ndoc_kind: engineering\npurpose: {purpose}\nstatus: draft\n---\n"
    many = "".join(f"## Heading {i}\n\nText {i}.\n\n" for i in range(10_000))
    (fixture_bank / "engineering" / "many.md").write_text(
        head.format(title="Many Headings", purpose="Ten thousand sections.") + many,
        encoding="utf-8",
    )
    line = "x" * 500_000 + " zanzibar " + "y" * 500_000
    (fixture_bank / "engineering" / "one-line.md").write_text(
        head.format(title="One Line", purpose="A single huge line.") + line, encoding="utf-8"
    )
    bank = Bank(fixture_bank)
    with within_guard():
        snapshot = bank.refresh()
        section = read(
            snapshot,
            "engineering/many.md",
            section="Heading 9999",
            lookup=PathLookup(relative(bank)),
        )
        whole = read(snapshot, "engineering/one-line.md", lookup=PathLookup(relative(bank)))
        routed = route(snapshot, SearchIndex(), "ten thousand sections headings")
        searched = search(snapshot, SearchIndex(), "zanzibar")
    assert section["section"] == "Heading 9999"
    assert section["content"] == "## Heading 9999\n\nText 9999."
    assert whole["truncated"] is True and len(whole["content"]) == 400_000
    assert "engineering/many.md" in [hit["path"] for hit in routed["results"]]
    assert [hit["path"] for hit in searched["results"]] == ["engineering/one-line.md"]


def test_a_1001_character_question_is_answered_by_the_core_and_refused_by_the_schema(
    fixture_bank: Path,
) -> None:
    """The MCP schemas bound `question`/`query` to 1,000 characters (04 §2); the functions
    behind them answer any length normally."""
    from mbank.server import build_server

    snapshot = Bank(fixture_bank).refresh()
    question = ("queue retry " * 100)[:1001]
    assert len(question) == 1001
    assert isinstance(route(snapshot, SearchIndex(), question)["results"], list)
    assert isinstance(search(snapshot, SearchIndex(), question)["results"], list)
    server = build_server(str(fixture_bank))
    tools = {tool.name: tool for tool in server._tool_manager.list_tools()}
    assert tools["bank_route"].parameters["properties"]["question"]["maxLength"] == 1000
    assert tools["bank_search"].parameters["properties"]["query"]["maxLength"] == 1000
