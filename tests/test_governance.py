"""Issue 14: governance integrity and the write gaps first real use found.

1. an agent (MCP) cannot change `dna/`; a person can, from the CLI with --governance, and sees
   the validation delta; 2. vocabulary is enforced the same way by every write; 3. bank_create
   keeps one H1; 4. list fields are writable through create's gates; 5. undo is a stack and
   bank_undo reaches it over MCP. Every refusal is checked inside `assert_unchanged` with its
   exact message, over MCP (the in-process SDK client) and on the CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from document_writes import Writer, normalise, run_cli
from fixture_banks import copy_fixture
from mcp import Client
from planners import Clock, Ids, tree_bytes

import mbank.journal as journal
from mbank.server import build_server

pytestmark = pytest.mark.anyio

FORWARD = (
    "the bank's governance (dna/), which only a person changes, so nothing was written. "
    "Propose the change as an inbox note (bank_create with inbox: true) for a person to apply, "
    "or run the same write from the CLI with --governance."
)
DNA_WRITES = {
    "edit": (
        "bank_edit",
        {"path": "dna/principles.md", "find": "Each fact has exactly one home.", "replace": "x"},
        "dna/principles.md",
    ),
    "create": (
        "bank_create",
        {
            "docKind": "governance",
            "path": "dna/security.md",
            "title": "Security",
            "purpose": "Read before handling a secret.",
        },
        "dna/security.md, dna/README.md",
    ),
    "rewrite": (
        "bank_rewrite",
        {"path": "dna/governance.md", "body": "# Governance\n\nAnything goes."},
        "dna/governance.md",
    ),
    "set_field": (
        "bank_set_field",
        {"path": "dna/principles.md", "field": "purpose", "value": "Whatever."},
        "dna/principles.md",
    ),
    "set_status": (
        "bank_set_status",
        {"path": "dna/principles.md", "status": "draft"},
        "dna/principles.md",
    ),
}


def refused(paths: str) -> str:
    return f"This write would change {paths}, {FORWARD}"


def engine(root: Path) -> dict[str, Any]:
    return {"clock": Clock(), "make_id": Ids(), "cwd": str(root.parent)}


async def mcp_call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, structuredContent or the refusal text after the SDK's prefix)."""
    result = await client.call_tool(name, arguments)
    text: str = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        return True, text.removeprefix(f"Error executing tool {name}: ")
    return False, result.structured_content


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path / "project" / "memory_bank", overlay=False)


# --------------------------------------------------------------------------------------------
# 1. An agent cannot change dna/
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DNA_WRITES))
async def test_every_dna_write_over_mcp_is_refused_dry_run_too(
    bank: Path, assert_unchanged: Any, name: str
) -> None:
    tool, arguments, paths = DNA_WRITES[name]
    async with Client(build_server(str(bank), engine=engine(bank))) as client:
        with assert_unchanged(bank):
            for dry_run in (False, True):
                error, text = await mcp_call(client, tool, {**arguments, "dryRun": dry_run})
                assert (error, text) == (True, refused(paths))


async def test_undo_of_a_governance_write_over_mcp_is_refused(
    bank: Path, assert_unchanged: Any
) -> None:
    person = Writer(bank)
    person.governance = True
    person.call("bank_set_field", {"path": "dna/principles.md", "field": "owner", "value": "ana"})
    async with Client(build_server(str(bank), engine=engine(bank))) as client:
        with assert_unchanged(bank):
            assert await mcp_call(client, "bank_undo", {}) == (True, refused("dna/principles.md"))


@pytest.mark.parametrize("name", sorted(DNA_WRITES))
def test_the_cli_refuses_a_dna_write_without_the_flag(
    bank: Path, assert_unchanged: Any, capsys: Any, name: str
) -> None:
    argv = {
        "edit": ["edit", "dna/principles.md", "--find", "Each fact has exactly one home."],
        "create": ["create", "dna/security.md", "--kind", "governance", "--purpose", "p"],
        "rewrite": ["rewrite", "dna/governance.md", "--body", "# Governance\n\nAnything goes."],
        "set_field": ["set-field", "dna/principles.md", "purpose", "Whatever."],
        "set_status": ["set-status", "dna/principles.md", "draft"],
    }[name]
    if name == "edit":
        argv += ["--replace", "x"]
    _tool, _arguments, paths = DNA_WRITES[name]
    with assert_unchanged(bank):
        for dry in ([], ["--dry-run"]):
            code, out, err = run_cli(["--root", str(bank), *argv, *dry], capsys)
            assert (code, out, err) == (1, "", f"mbank: {refused(paths)}\n")


def test_a_person_rewrites_governance_with_the_flag_and_sees_the_delta(
    bank: Path, capsys: Any, snapshot: Any
) -> None:
    # a document of a kind the rules do not declare: rewriting the rules away legalises it
    (bank / "domain" / "old.md").write_text(
        "---\ntitle: Old\ndoc_kind: runbook\ndoc_function: canonical\npurpose: p\n"
        "status: draft\n---\n# Old\n"
    )
    body = "# Governance\n\nAnything goes."
    argv = ["--root", str(bank), "--json", "rewrite", "dna/governance.md", "--governance"]
    code, out, err = run_cli([*argv, "--body", body, "--dry-run"], capsys)
    assert code == 0, err
    dry = json.loads(out)
    delta = dry["validationDelta"]
    assert delta["appear"] == [] and len(delta["disappear"]) >= 1
    assert dry["diff"].endswith(
        "validation delta: 0 appear, "
        f"{len(delta['disappear'])} disappear\n"
        + "".join(
            f"- {item['severity']} [{item['rule']}] {item['path']}: {item['message']}\n"
            for item in delta["disappear"]
        )
    )
    code, out, err = run_cli([*argv, "--body", body], capsys)
    assert code == 0, err
    real = json.loads(out)
    assert real["rewritten"] is True and real["validationDelta"] == delta
    record = journal.record_data(journal.read_records(str(bank))[-1])
    assert record["governance"] is True and record["via"] == "cli"
    assert normalise({"dry": dry, "real": {**real, "journalId": "<ID>"}}, bank) == snapshot


def test_the_human_report_of_a_governance_write_ends_with_the_delta(
    bank: Path, capsys: Any
) -> None:
    argv = ["--root", str(bank), "set-field", "dna/principles.md", "owner", "ana"]
    code, out, err = run_cli([*argv, "--governance"], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == "SET dna/principles.md owner: (absent) -> ana"
    assert out.endswith("validation delta: 0 appear, 0 disappear\n")


def test_a_governance_write_still_refuses_new_errors_on_its_own_files(
    bank: Path, assert_unchanged: Any
) -> None:
    person = Writer(bank)
    person.governance = True
    with assert_unchanged(bank):
        assert person.refusal(
            "bank_set_field", {"path": "dna/governance.md", "field": "derived_from", "value": []}
        ) == (
            "postcheck",
            "This write would add 1 validation error, so nothing was written:\n"
            "- [missing-derived-from] dna/governance.md: Governance requires every active "
            "non-root document to declare derived_from.",
        )


def test_ordinary_writes_carry_no_governance_mark(bank: Path) -> None:
    Writer(bank).call("bank_set_field", {"path": "orphan.md", "field": "owner", "value": "ana"})
    record = journal.record_data(journal.read_records(str(bank))[-1])
    assert "governance" not in record and record["tool"] == "bank_set_field"


async def test_init_and_materialize_still_seed_governance_over_mcp(tmp_path: Path) -> None:
    root = tmp_path / "project" / "memory_bank"
    async with Client(build_server(str(root), engine=engine(root))) as client:
        error, result = await mcp_call(client, "bank_init", {"name": "Probe"})
        assert not error, result
    assert (root / "dna" / "governance.md").is_file()
    async with Client(build_server(str(root), engine=engine(root))) as client:
        error, result = await mcp_call(client, "bank_init", {"name": "Probe", "force": True})
        assert not error, result
        error, result = await mcp_call(client, "bank_materialize_flows", {})
        assert not error, result


# --------------------------------------------------------------------------------------------
# 2. Vocabulary is enforced the same way everywhere
# --------------------------------------------------------------------------------------------

KINDS = "governance | domain | engineering | adr | feature"


def test_create_with_a_kind_neither_declared_nor_used_is_refused(
    bank: Path, assert_unchanged: Any, capsys: Any
) -> None:
    message = (
        'doc_kind "banana" is neither declared in dna/ nor used by any document. Allowed: '
        f"{KINDS}. A new value is declared in dna/governance.md first."
    )
    with assert_unchanged(bank):
        code, _out, err = run_cli(
            ["--root", str(bank), "create", "domain/b.md", "--kind", "banana", "--purpose", "p"],
            capsys,
        )
        assert (code, err) == (1, f"mbank: {message}\n")
        assert Writer(bank).refusal(
            "bank_create",
            {"docKind": "banana", "path": "domain/b.md", "title": "B", "purpose": "p"},
        ) == ("value-not-declared", message)


def test_extra_and_promote_and_set_status_go_through_the_same_rule(
    bank: Path, assert_unchanged: Any
) -> None:
    writer = Writer(bank)
    (bank / "_inbox").mkdir()
    (bank / "_inbox" / "n.md").write_text("---\ntitle: N\n---\n# N\n\nA note.\n")
    with assert_unchanged(bank):
        assert writer.refusal(
            "bank_create",
            {
                "docKind": "domain",
                "path": "domain/b.md",
                "title": "B",
                "purpose": "p",
                "extra": {"doc_function": "scroll"},
            },
        ) == (
            "value-not-declared",
            'doc_function "scroll" is neither declared in dna/ nor used by any document. '
            "Allowed: canonical | index | template. A new value is declared in "
            "dna/governance.md first.",
        )
        assert writer.refusal(
            "bank_promote",
            {
                "path": "_inbox/n.md",
                "to": "domain/n.md",
                "docKind": "banana",
                "status": "draft",
                "purpose": "p",
            },
        ) == (
            "value-not-declared",
            'doc_kind "banana" is neither declared in dna/ nor used by any document. Allowed: '
            f"{KINDS}. A new value is declared in dna/governance.md first.",
        )
        assert writer.refusal("bank_set_status", {"path": "orphan.md", "status": "published"}) == (
            "value-not-declared",
            'status "published" is neither declared in dna/ nor used by any document. '
            "Allowed: draft | active | archived. A new value is declared in "
            "dna/frontmatter.md first.",
        )


def test_a_value_some_document_uses_is_accepted_with_the_warning(bank: Path) -> None:
    (bank / "domain" / "old.md").write_text(
        "---\ntitle: Old\ndoc_kind: runbook\ndoc_function: canonical\nstatus: draft\n---\n# Old\n"
    )
    result = Writer(bank).call(
        "bank_create",
        {"docKind": "runbook", "path": "domain/new.md", "title": "New", "purpose": "p"},
        dry_run=True,
    )
    assert 'doc_kind "runbook" is not among the values declared in dna/.' in result["warnings"]


def test_a_bank_without_a_contract_keeps_todays_behaviour(bank: Path) -> None:
    shutil.rmtree(bank / "dna")
    result = Writer(bank).call(
        "bank_create",
        {"docKind": "banana", "path": "domain/b.md", "title": "B", "purpose": "p"},
        dry_run=True,
    )
    assert result["frontmatter"]["doc_kind"] == "banana"
    assert not any("among the values declared" in warning for warning in result["warnings"])


def test_an_index_file_gets_the_declared_index_function(bank: Path, snapshot: Any) -> None:
    arguments = {"docKind": "feature", "path": "features/FT-9/README.md", "title": "F"}
    planned = Writer(bank).planned(None, "bank_create", {**arguments, "purpose": "p"})  # type: ignore[arg-type]
    assert planned["result"]["frontmatter"]["doc_function"] == "index"
    assert planned == snapshot
    other = Writer(bank).call(
        "bank_create",
        {"docKind": "feature", "path": "features/FT-9/brief.md", "title": "F", "purpose": "p"},
        dry_run=True,
    )
    assert other["frontmatter"]["doc_function"] == "canonical"


# --------------------------------------------------------------------------------------------
# 3. bank_create keeps one H1
# --------------------------------------------------------------------------------------------


def test_a_body_repeating_the_title_keeps_one_h1(bank: Path, snapshot: Any) -> None:
    writer = Writer(bank)
    arguments = {
        "docKind": "domain",
        "path": "domain/terms.md",
        "title": "Job Terms",
        "purpose": "Read for the words of the domain.",
        "body": "#  job terms \n\nA job is one unit of intake.\n",
    }
    planned = writer.planned(None, "bank_create", arguments)  # type: ignore[arg-type]
    created = planned["plan"]["ops"][0]["content"]
    assert created.count("\n# ") == 1
    assert created.endswith("# Job Terms\n\nA job is one unit of intake.\n")
    assert planned == snapshot


def test_a_body_with_another_h1_is_refused_naming_both(
    bank: Path, assert_unchanged: Any, capsys: Any
) -> None:
    message = (
        'The body starts with the heading "Something Else", but the title is "Job Terms". '
        "Make them the same, or drop the heading from the body (the title becomes the "
        "document's heading)."
    )
    with assert_unchanged(bank):
        assert Writer(bank).refusal(
            "bank_create",
            {
                "docKind": "domain",
                "path": "domain/terms.md",
                "title": "Job Terms",
                "purpose": "p",
                "body": "# Something Else\n\nText.",
            },
        ) == ("title-mismatch", message)
        code, _out, err = run_cli(
            [
                "--root",
                str(bank),
                "create",
                "domain/terms.md",
                "--kind",
                "domain",
                "--title",
                "Job Terms",
                "--purpose",
                "p",
                "--body",
                "# Something Else\n\nText.",
            ],
            capsys,
        )
        assert (code, err) == (1, f"mbank: {message}\n")


# --------------------------------------------------------------------------------------------
# 4. List fields are writable, and gated
# --------------------------------------------------------------------------------------------

ARCH = "engineering/architecture.md"


def test_derived_from_is_set_to_a_list(bank: Path, snapshot: Any, capsys: Any) -> None:
    writer = Writer(bank)
    arguments = {"path": ARCH, "field": "derived_from", "value": ["../domain/rules.md"]}
    planned = writer.planned(None, "bank_set_field", arguments)  # type: ignore[arg-type]
    assert planned["result"]["to"] == ["../domain/rules.md"]
    assert planned == snapshot
    code, out, err = run_cli(
        [
            "--root",
            str(bank),
            "set-field",
            ARCH,
            "derived_from",
            '["../domain/rules.md", "../dna/governance.md"]',
        ],
        capsys,
    )
    assert code == 0, err
    assert out.splitlines()[0] == (
        f'SET {ARCH} derived_from: ["../domain/rules.md", "../missing/nowhere.md"] -> '
        '["../domain/rules.md", "../dna/governance.md"]'
    )
    text = (bank / ARCH).read_text()
    assert "derived_from:\n  - ../domain/rules.md\n  - ../dna/governance.md\ncanonical_for:" in text
    assert writer.bank.refresh().docs[ARCH].canonical_for == ("service_components",)


def test_list_refusals_name_the_offending_entry(bank: Path, assert_unchanged: Any) -> None:
    writer = Writer(bank)
    cases = [
        (
            {"field": "derived_from", "value": ["../domain/rules.md", "../nowhere.md"]},
            (
                "derived-from-unresolved",
                'derived_from "../nowhere.md" does not resolve to a document of this bank '
                "(tried nowhere.md).",
            ),
        ),
        (
            {"field": "canonical_for", "value": ["service_components", "filter_thresholds"]},
            (
                "canonical-owned",
                'canonical_for "filter_thresholds" is already owned by conflict.md, '
                "domain/rules.md. One fact, one home.",
            ),
        ),
        (
            {"field": "anchors", "value": ["src/app.py", "../../etc/passwd"]},
            (
                "anchor-outside",
                'anchors "../../etc/passwd" is outside the project: an anchor is a path '
                "relative to the repository, inside it.",
            ),
        ),
        (
            {"field": "anchors", "value": ["/etc/passwd"]},
            (
                "anchor-outside",
                'anchors "/etc/passwd" is outside the project: an anchor is a path relative '
                "to the repository, inside it.",
            ),
        ),
        (
            {"field": "must_not_define", "value": ["ok", " "]},
            (
                "list-entry",
                'must_not_define entry " " is blank or spans lines; each entry is '
                "one non-blank line.",
            ),
        ),
    ]
    with assert_unchanged(bank):
        for given, expected in cases:
            assert writer.refusal("bank_set_field", {"path": ARCH, **given}) == expected


def test_a_new_cycle_is_refused_and_an_old_one_is_not_this_writes_doing(
    bank: Path, assert_unchanged: Any
) -> None:
    writer = Writer(bank)
    with assert_unchanged(bank):
        assert writer.refusal(
            "bank_set_field",
            {"path": "domain/rules.md", "field": "derived_from", "value": ["../" + ARCH]},
        ) == (
            "derived-from-cycle",
            'derived_from "../engineering/architecture.md" would close a cycle: '
            "domain/rules.md -> engineering/architecture.md -> domain/rules.md. A document "
            "cannot derive from what derives from it.",
        )


async def test_list_fields_over_mcp(bank: Path, assert_unchanged: Any) -> None:
    async with Client(build_server(str(bank), engine=engine(bank))) as client:
        with assert_unchanged(bank):
            error, text = await mcp_call(
                client,
                "bank_set_field",
                {"path": ARCH, "field": "derived_from", "value": ["../nowhere.md"]},
            )
            assert (error, text) == (
                True,
                'derived_from "../nowhere.md" does not resolve to a document of this bank '
                "(tried nowhere.md).",
            )
        error, result = await mcp_call(
            client,
            "bank_set_field",
            {"path": ARCH, "field": "anchors", "value": ["src/intake.py"]},
        )
        assert not error, result
        assert result["changed"] is True and result["to"] == ["src/intake.py"]
        assert result["line"] == "anchors:\n  - src/intake.py"
        error, again = await mcp_call(
            client,
            "bank_set_field",
            {"path": ARCH, "field": "anchors", "value": ["src/intake.py"], "dryRun": True},
        )
        assert not error and again["changed"] is False and again["diff"] == ""


# --------------------------------------------------------------------------------------------
# 5. Undo is a stack, and the agent can reach it
# --------------------------------------------------------------------------------------------


async def test_bank_undo_over_mcp_steps_back_one_write_at_a_time(
    bank: Path, assert_unchanged: Any, snapshot: Any
) -> None:
    states = [tree_bytes(bank)]
    async with Client(build_server(str(bank), engine=engine(bank))) as client:
        for value in ("ana", "bo"):
            error, result = await mcp_call(
                client, "bank_set_field", {"path": "orphan.md", "field": "owner", "value": value}
            )
            assert not error, result
            states.append(tree_bytes(bank))
        with assert_unchanged(bank):
            error, dry = await mcp_call(client, "bank_undo", {"dryRun": True})
        assert not error and dry["dryRun"] is True
        assert normalise(dry, bank) == snapshot
        for back in (1, 2):
            error, result = await mcp_call(client, "bank_undo", {})
            assert not error, result
            assert tree_bytes(bank) == states[-1 - back]
        with assert_unchanged(bank):
            assert await mcp_call(client, "bank_undo", {}) == (
                True,
                "Nothing to undo: every write in the journal is already undone. To re-apply "
                "one, undo its undo by id (memorybank://journal, or mbank history, lists them).",
            )
            assert await mcp_call(client, "bank_undo", {"id": "nope"}) == (
                True,
                "No journal record has id nope.",
            )
        records = journal.read_records(str(bank))
        assert [(r.tool, r.via) for r in records[-2:]] == [("undo", "mcp"), ("undo", "mcp")]


def test_cli_undo_twice_reverts_two_writes(bank: Path, capsys: Any) -> None:
    before = tree_bytes(bank)
    for value in ("ana", "bo"):
        argv = ["--root", str(bank), "set-field", "orphan.md", "owner", value]
        assert run_cli(argv, capsys)[0] == 0
    for _ in range(2):
        code, out, err = run_cli(["--root", str(bank), "undo"], capsys)
        assert code == 0, err
        assert out.startswith("UNDONE ")
    assert tree_bytes(bank) == before


# --------------------------------------------------------------------------------------------
# The corpus tier: the dna/ refusals on copies of the shared banks
# --------------------------------------------------------------------------------------------


@pytest.mark.corpus
async def test_the_dna_refusals_on_a_copy_of_each_shared_bank(
    tmp_path: Path, corpus: dict[str, Path], assert_unchanged: Any, capsys: Any
) -> None:
    assert len(corpus) >= 2, sorted(corpus)
    for name, source in sorted(corpus.items()):
        await dna_refusals_on_a_copy(tmp_path / name, source, assert_unchanged, capsys)


async def dna_refusals_on_a_copy(
    bank: Path, source: Path, assert_unchanged: Any, capsys: Any
) -> None:
    shutil.copytree(source, bank, symlinks=True, copy_function=shutil.copyfile)
    writes = {
        "bank_set_field": {"path": "dna/principles.md", "field": "owner", "value": "x"},
        "bank_create": {
            "docKind": "governance",
            "path": "dna/security.md",
            "title": "Security",
            "purpose": "p",
        },
        "bank_rewrite": {"path": "dna/governance.md", "body": "# Governance\n\nAnything goes."},
    }
    async with Client(build_server(str(bank), engine=engine(bank))) as client:
        with assert_unchanged(bank):
            for tool, arguments in writes.items():
                for dry_run in (False, True):
                    error, text = await mcp_call(client, tool, {**arguments, "dryRun": dry_run})
                    assert error and text.startswith("This write would change dna/"), text
                    assert text.endswith(FORWARD), text
            code, _out, err = run_cli(
                ["--root", str(bank), "rewrite", "dna/governance.md", "--body", "# G\n\nx"],
                capsys,
            )
            assert (code, err) == (1, f"mbank: {refused('dna/governance.md')}\n")
