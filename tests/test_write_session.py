"""A scripted session of writes through every write tool (issue 6 acceptance).

On the extended fixture and on a copy of each shared corpus: more than 40 calls of create,
promote, discard, edit, update_section, rewrite, set_status and set_field — real writes, dry
runs and refusals — leave the validation findings exactly as they were (compared by identity,
`(rule, path, message)`); no step adds one; every refused write changes no byte; every dry
run changes no byte and its diff, applied to the pre-state, gives the post-state of the same
write made for real.

The session is built from the bank itself (`plan_session`), so the same script runs on any
bank: it picks an ordinary document (declared kind and status, clean frontmatter, two
sections, an index beside it) and works around it.
"""

from __future__ import annotations

import posixpath
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import write_calls
from document_writes import Writer, apply_diff

from mbank.model import Doc, RefusalError
from mbank.parse import split_frontmatter
from mbank.projection import Snapshot
from mbank.validate import findings

Identity = tuple[str, str, str]
TOOLS = {
    "bank_create": write_calls.create,
    "bank_promote": write_calls.promote,
    "bank_discard": write_calls.discard,
    "bank_edit": write_calls.edit,
    "bank_update_section": write_calls.update_section,
    "bank_rewrite": write_calls.rewrite,
    "bank_set_status": write_calls.set_status,
    "bank_set_field": write_calls.set_field,
}


class Step(msgspec.Struct, frozen=True):
    """One call of the session: a real write, a dry run, or a write that must be refused."""

    tool: str
    arguments: dict[str, Any]
    mode: str  # "write" | "dry" | "refuse"
    reason: str | None = None


def identities(snapshot: Snapshot) -> set[Identity]:
    return {(f.rule, f.path, f.message) for f in findings(snapshot)}


def _texts(root: Path) -> dict[str, str | None]:
    texts: dict[str, str | None] = {}
    for path in root.rglob("*.md"):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("."):
            continue
        try:
            texts[relative] = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:
            continue
    return texts


def _diff_paths(diff: str) -> set[str]:
    return {line[6:] for line in diff.split("\n") if line.startswith(("--- a/", "+++ b/"))}


# --------------------------------------------------------------------------------------------
# choosing what to work on
# --------------------------------------------------------------------------------------------


def _declared(values: tuple[str, ...], wanted: str) -> bool:
    return not values or wanted in values


def _ordinary(snapshot: Snapshot, doc: Doc) -> bool:
    contract = snapshot.contract
    directory = posixpath.dirname(doc.path)
    index = posixpath.join(directory, "README.md") if directory else "README.md"
    index_doc = snapshot.docs.get(index)
    return (
        doc.text_ok
        and doc.parse_error is None
        and doc.has_frontmatter
        and doc.doc_function not in ("template", "index")
        and not doc.path.endswith("README.md")
        and not doc.path.startswith(("dna/", "flows/", "_inbox/"))
        and len(doc.sections) >= 2
        and doc.first_h1 is not None
        and isinstance(doc.data.get("title"), str)
        and doc.doc_kind != ""
        and _declared(contract.statuses, doc.status)
        and index_doc is not None
        and index_doc.text_ok
        and index != doc.path
    )


def _unique_line(snapshot: Snapshot, doc: Doc) -> str:
    """A body line of some length that occurs exactly once in the body."""
    body = split_frontmatter(snapshot.raw[doc.path].replace("\r\n", "\n")).body
    for line in body.split("\n"):
        text = line.strip()
        if (
            len(text) >= 20
            and not text.startswith(("#", "|", "```", "~~~", "-", "*", ">"))
            and body.count(text) == 1
        ):
            return text
    raise AssertionError(f"no unique line in {doc.path}")


def plan_session(snapshot: Snapshot) -> list[Step]:
    """The scripted session for this bank: at least 40 calls, every tool, every mode."""
    candidates = [doc for doc in snapshot.docs.values() if _ordinary(snapshot, doc)]
    assert candidates, "no ordinary document to work on"
    target = candidates[0]
    contract = snapshot.contract
    # a kind the contract declares, so the new documents carry no unknown-enum-value finding
    preferred = (target.doc_kind, "engineering", "domain", "project", *contract.doc_kinds)
    kind = next(k for k in preferred if _declared(contract.doc_kinds, k))
    draft = "draft" if _declared(contract.statuses, "draft") else contract.statuses[0]
    active = "active" if _declared(contract.statuses, "active") else draft
    directory = posixpath.dirname(target.path)

    def here(name: str) -> str:
        return posixpath.join(directory, name) if directory else name

    base = posixpath.basename(target.path)
    line = _unique_line(snapshot, target)
    first, last = target.sections[0].title, target.sections[-1].title
    note = here("mbank-session-note.md")
    promoted = here("mbank-session-promoted.md")
    created = {
        "path": note,
        "docKind": kind,
        "title": "Session Note",
        "purpose": "Written by the scripted write session.",
        "derivedFrom": [base],
        "status": draft,
        "body": "## Scope\n\nWhat the session checks.\n\n## Result\n\nNothing changed.\n",
    }
    capture = {
        "path": "mbank-session-capture.md",
        "docKind": kind,
        "title": "Captured Fact",
        "purpose": "A fact captured during the session.",
        "inbox": True,
        "body": "## Fact\n\nThe session captured this.\n",
    }
    scratch = {**capture, "path": "mbank-session-scratch.md", "title": "Scratch"}
    owner = next(
        (
            doc.path
            for doc in snapshot.docs.values()
            if doc.canonical_for
            and doc.text_ok
            and doc.doc_function != "template"
            and doc.layer != "inbox"
        ),
        None,
    )
    template = next(
        (doc.path for doc in snapshot.docs.values() if doc.doc_function == "template"), None
    )
    non_text = next((doc.path for doc in snapshot.docs.values() if not doc.text_ok), None)

    steps = [
        # create: refusals, a dry run, the real write
        Step("bank_create", {**created, "path": "../outside.md"}, "refuse", "path-outside"),
        Step("bank_create", {**created, "path": target.path}, "refuse", "exists"),
        Step("bank_create", {**created, "title": " "}, "refuse", "title-required"),
        Step(
            "bank_create",
            {**created, "derivedFrom": ["missing-nowhere.md"]},
            "refuse",
            "derived-from-unresolved",
        ),
        Step("bank_create", created, "dry"),
        Step("bank_create", created, "write"),
        # edit on the ordinary document and on the new note
        Step(
            "bank_edit",
            {"path": target.path, "find": "zz-not-there-zz", "replace": "x"},
            "refuse",
            "not-found",
        ),
        Step(
            "bank_edit",
            {"path": target.path, "find": " ", "replace": "  "},
            "refuse",
            "found-several",
        ),
        Step(
            "bank_edit",
            {"path": target.path, "find": "a", "replace": "a"},
            "refuse",
            "find-equals-replace",
        ),
        Step(
            "bank_edit", {"path": target.path, "find": line, "replace": line + " (checked)"}, "dry"
        ),
        Step(
            "bank_edit",
            {"path": target.path, "find": line, "replace": line + " (checked)"},
            "write",
        ),
        Step(
            "bank_edit",
            {"path": target.path, "find": line + " (checked)", "replace": line},
            "write",
        ),
        Step(
            "bank_edit",
            {"path": note, "find": "Nothing changed.", "replace": "All held.", "section": "Result"},
            "write",
        ),
        # update_section
        Step(
            "bank_update_section",
            {"path": target.path, "section": "zz-none", "content": "x"},
            "refuse",
            "section-not-found",
        ),
        Step(
            "bank_update_section",
            {"path": target.path, "section": first, "content": " "},
            "refuse",
            "content-required",
        ),
        Step(
            "bank_update_section",
            {
                "path": target.path,
                "section": last,
                "content": "Checked by the session.",
                "mode": "append",
            },
            "dry",
        ),
        Step(
            "bank_update_section",
            {
                "path": target.path,
                "section": last,
                "content": "Checked by the session.",
                "mode": "append",
            },
            "write",
        ),
        Step(
            "bank_update_section",
            {"path": note, "section": "Scope", "content": "Every write tool, once at least."},
            "write",
        ),
        # rewrite (only documents the session created)
        Step("bank_rewrite", {"path": note, "body": " "}, "refuse", "body-required"),
        Step(
            "bank_rewrite",
            {"path": note, "body": "---\nx: 1\n---\n"},
            "refuse",
            "body-has-frontmatter",
        ),
        Step("bank_rewrite", {"path": note, "body": "# Session Note\n\n## Scope\n\nAll.\n"}, "dry"),
        Step(
            "bank_rewrite", {"path": note, "body": "# Session Note\n\n## Scope\n\nAll.\n"}, "write"
        ),
        Step(
            "bank_rewrite", {"path": note, "body": "# Session Note\n\n## Scope\n\nAll.\n"}, "write"
        ),  # the same body again: a no-op
        # set_field
        Step(
            "bank_set_field",
            {"path": target.path, "field": "status", "value": draft},
            "refuse",
            "field-status",
        ),
        Step(
            "bank_set_field",
            {"path": target.path, "field": "canonical_for", "value": "k"},
            "refuse",
            "value-not-list",
        ),
        Step(
            "bank_set_field",
            {"path": target.path, "field": "owner", "value": "a\nb"},
            "refuse",
            "value-multiline",
        ),
        Step(
            "bank_set_field",
            {"path": target.path, "field": "mbank_session", "value": "checked: yes"},
            "dry",
        ),
        Step(
            "bank_set_field",
            {"path": target.path, "field": "mbank_session", "value": "checked: yes"},
            "write",
        ),
        Step(
            "bank_set_field",
            {"path": note, "field": "purpose", "value": "Read when: checking the write session."},
            "write",
        ),
        Step(
            "bank_set_field", {"path": note, "field": "title", "value": "Session Record"}, "write"
        ),
        Step(
            "bank_set_field", {"path": note, "field": "reviewed_on", "value": "2026-09-14"}, "write"
        ),
        # set_status
        Step("bank_set_status", {"path": note, "status": " "}, "refuse", "status-required"),
        Step(
            "bank_set_status",
            {"path": note, "status": draft, "releaseCanonical": True},
            "refuse",
            "release-not-archiving",
        ),
        Step("bank_set_status", {"path": note, "status": active}, "dry"),
        Step("bank_set_status", {"path": note, "status": active}, "write"),
        Step("bank_set_status", {"path": target.path, "status": target.status}, "write"),
        # the inbox: capture, amend, promote; capture another, discard it
        Step("bank_create", capture, "write"),
        Step(
            "bank_set_status",
            {"path": "_inbox/mbank-session-capture.md", "status": active},
            "refuse",
            "inbox-status",
        ),
        Step(
            "bank_update_section",
            {
                "path": "_inbox/mbank-session-capture.md",
                "section": "Fact",
                "content": "Confirmed.",
                "mode": "append",
            },
            "write",
        ),
        Step(
            "bank_set_field",
            {
                "path": "_inbox/mbank-session-capture.md",
                "field": "purpose",
                "value": "A fact the session confirmed.",
            },
            "write",
        ),
        Step(
            "bank_promote", {"path": target.path, "to": here("x.md")}, "refuse", "not-quarantined"
        ),
        Step(
            "bank_promote",
            {"path": "_inbox/mbank-session-capture.md", "to": "_inbox/elsewhere.md"},
            "refuse",
            "stays-quarantined",
        ),
        Step(
            "bank_promote",
            {
                "path": "_inbox/mbank-session-capture.md",
                "to": promoted,
                "derivedFrom": [base],
                "status": active,
            },
            "dry",
        ),
        Step(
            "bank_promote",
            {
                "path": "_inbox/mbank-session-capture.md",
                "to": promoted,
                "derivedFrom": [base],
                "status": active,
            },
            "write",
        ),
        Step(
            "bank_edit",
            {"path": "_inbox/mbank-session-capture.md", "find": "a", "replace": "b"},
            "refuse",
            "not-a-document",
        ),
        Step("bank_create", scratch, "write"),
        Step(
            "bank_discard",
            {"path": "_inbox/mbank-session-scratch.md", "reason": " "},
            "refuse",
            "reason-required",
        ),
        Step("bank_discard", {"path": target.path, "reason": "no"}, "refuse", "not-quarantined"),
        Step(
            "bank_discard",
            {
                "path": "_inbox/mbank-session-scratch.md",
                "reason": "A duplicate of the captured fact.",
            },
            "dry",
        ),
        Step(
            "bank_discard",
            {
                "path": "_inbox/mbank-session-scratch.md",
                "reason": "A duplicate of the captured fact.",
            },
            "write",
        ),
        Step(
            "bank_rewrite",
            {"path": "_inbox/mbank-session-scratch.md", "body": "x"},
            "refuse",
            "not-a-document",
        ),
    ]
    if owner is not None:
        steps.append(
            Step("bank_set_status", {"path": owner, "status": "archived"}, "refuse", "still-owns")
        )
    if template is not None:
        steps.append(
            Step("bank_edit", {"path": template, "find": "a", "replace": "b"}, "refuse", "template")
        )
    if non_text is not None:
        steps.append(
            Step(
                "bank_set_field",
                {"path": non_text, "field": "title", "value": "x"},
                "refuse",
                "not-text",
            )
        )
    return steps


# --------------------------------------------------------------------------------------------
# running it
# --------------------------------------------------------------------------------------------


def run_session(root: Path, assert_unchanged: Any) -> Counter[tuple[str, str]]:
    """Run the session on the bank at `root`, checking every invariant after every step."""
    writer = Writer(root)
    engine = writer.engine()
    before = identities(writer.bank.refresh())
    steps = plan_session(writer.bank.refresh())
    done: Counter[tuple[str, str]] = Counter()
    pending_diff: tuple[dict[str, str | None], str] | None = None

    def call(step: Step, dry_run: bool) -> dict[str, Any]:
        shell: Callable[..., dict[str, Any]] = TOOLS[step.tool]
        return shell(writer.bank, dict(step.arguments), dry_run=dry_run, **engine)

    for step in steps:
        if step.mode == "refuse":
            with assert_unchanged(root), pytest.raises(RefusalError) as caught:
                call(step, False)
            assert caught.value.refusal.rule == step.reason, (step, caught.value.refusal)
        elif step.mode == "dry":
            with assert_unchanged(root):
                result = call(step, True)
            assert result["dryRun"] is True and "journalId" not in result
            pending_diff = (_texts(root), result["diff"])
        else:
            result = call(step, False)
            if pending_diff is not None:
                pre, diff = pending_diff
                paths = _diff_paths(diff)
                patched = apply_diff({p: pre.get(p) for p in paths}, diff)
                post = _texts(root)
                assert patched == {p: post.get(p) for p in paths}, f"dry-run diff differs: {step}"
                pending_diff = None
        now = identities(writer.bank.refresh())
        assert now <= before, f"{step.tool} added findings: {sorted(now - before)}"
        done[(step.tool, step.mode)] += 1
    assert identities(writer.bank.refresh()) == before
    return done


def _assert_coverage(done: Counter[tuple[str, str]]) -> None:
    assert sum(done.values()) >= 40
    for tool in TOOLS:
        assert done[(tool, "write")] >= 1, tool
        assert done[(tool, "dry")] >= 1, tool
        assert done[(tool, "refuse")] >= 1, tool


def test_a_session_on_the_extended_fixture_adds_no_finding(
    fixture_plus: Path, assert_unchanged: Any
) -> None:
    done = run_session(fixture_plus, assert_unchanged)
    _assert_coverage(done)
    # the session worked around the first ordinary document, ADR-001, beside adr/README.md
    index = (fixture_plus / "adr" / "README.md").read_text()
    # the new note was registered as a table row; its title and purpose followed into it
    assert "| [`Session Record`](mbank-session-note.md) | Read when: checking the write " in index
    assert "(mbank-session-promoted.md)" in index
    assert not (fixture_plus / "_inbox" / "mbank-session-scratch.md").exists()
    assert (fixture_plus / "adr" / "mbank-session-promoted.md").exists()


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["IgorArkhipov__ai-setup", "dapi__code-converge"])
def test_a_session_on_a_copy_of_each_corpus_adds_no_finding(
    corpus: dict[str, Path], tmp_path: Path, name: str, assert_unchanged: Any
) -> None:
    if name not in corpus:
        pytest.skip(f"{name} is not among MBANK_TEST_ROOTS")
    root = tmp_path / name
    shutil.copytree(
        corpus[name],
        root,
        ignore=shutil.ignore_patterns(".mbank", ".git"),
        copy_function=shutil.copyfile,
    )
    _assert_coverage(run_session(root, assert_unchanged))
