"""bank_read: whole and sectioned reads, Unicode-aware section matching, the batch budget
(spec 02 §5, 01 §5.3, 07 §3.8)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mbank.model import RefusalError
from mbank.read import BATCH_BUDGET, PathLookup, read
from mbank.snapshot import Bank, Snapshot

RULES_SECTIONS = ["Thresholds", "Invariants", "Пороги"]


def write(root: Path, path: str, text: str | bytes) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")


def doc_text(title: str, body: str) -> str:
    return f"---\ntitle: {title}\ndoc_kind: engineering\nstatus: draft\n---\n{body}"


def snap(root: Path) -> Snapshot:
    return Bank(root).refresh()


def refusal(call: Callable[[], Any]) -> tuple[str, str]:
    with pytest.raises(RefusalError) as caught:
        call()
    return caught.value.refusal.rule, caught.value.refusal.message


# --------------------------------------------------------------------------------------------
# Single document
# --------------------------------------------------------------------------------------------


def test_whole_read_returns_stripped_body_frontmatter_and_sections(
    fixture_plus: Path, snapshot: Any
) -> None:
    result = read(snap(fixture_plus), "domain/rules.md")
    assert result["path"] == "domain/rules.md"
    assert result["title"] == "Domain Rules"
    assert result["frontmatter"]["canonical_for"] == ["filter_thresholds", "humanization_rules"]
    assert result["content"].startswith("# Domain Rules")
    assert result["content"] == result["content"].strip()
    assert "section" not in result
    assert result["bytes"] == len(result["content"].encode("utf-8"))
    assert result["truncated"] is False
    assert result["availableSections"] == RULES_SECTIONS
    assert result == snapshot


def test_section_read_is_the_heading_up_to_the_next_section(fixture_plus: Path) -> None:
    result = read(snap(fixture_plus), "domain/rules.md", section="Thresholds")
    assert result["section"] == "Thresholds"
    assert result["content"].startswith("## Thresholds\n")
    assert "L2 flags below 75." in result["content"]
    assert "## Invariants" not in result["content"]
    assert result["content"] == result["content"].rstrip()


def test_section_read_is_smaller_than_the_whole_document(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    whole = read(current, "domain/rules.md")
    part = read(current, "domain/rules.md", section="Invariants")
    assert part["bytes"] < whole["bytes"] / 2


def test_missing_section_is_refused_listing_every_heading(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    rule, message = refusal(lambda: read(current, "domain/rules.md", section="Missing"))
    assert rule == "section-not-found"
    assert message == (
        'Section "Missing" not found in domain/rules.md. '
        "Available: Thresholds | Invariants | Пороги"
    )


def test_russian_section_name_matches_case_insensitively(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    for target in ("пороги", "ПОРОГИ", "  Пороги  "):
        result = read(current, "domain/rules.md", section=target)
        assert result["section"] == "Пороги"
        assert result["content"].startswith("## Пороги")
        assert "Пороги проверяются" in result["content"]


def test_unmatched_cyrillic_name_is_refused_never_answered_with_the_first_heading(
    fixture_plus: Path,
) -> None:
    current = snap(fixture_plus)
    rule, message = refusal(lambda: read(current, "domain/rules.md", section="Правила"))
    assert rule == "section-not-found"
    assert message.endswith("Available: Thresholds | Invariants | Пороги")


def test_exact_match_wins_over_several_contains_matches(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a.md",
        doc_text("A", "## Data Flow Notes\n\nx\n\n## Data Flow\n\ny\n\n## Data Flow Extra\n\nz\n"),
    )
    result = read(snap(tmp_path), "a.md", section="data flow")
    assert result["section"] == "Data Flow"
    assert result["content"] == "## Data Flow\n\ny"


def test_first_of_two_identical_headings_wins(tmp_path: Path) -> None:
    write(tmp_path, "a.md", doc_text("A", "## Notes\n\nfirst\n\n## Notes\n\nsecond\n"))
    assert read(snap(tmp_path), "a.md", section="notes")["content"] == "## Notes\n\nfirst"


def test_unique_contains_match_is_taken(fixture_plus: Path) -> None:
    result = read(snap(fixture_plus), "domain/rules.md", section="thresh")
    assert result["section"] == "Thresholds"


def test_several_contains_matches_are_refused_listing_them(tmp_path: Path) -> None:
    write(tmp_path, "a.md", doc_text("A", "## Data Model\n\nx\n\n## Data Flow\n\ny\n\n## Other\n"))
    current = snap(tmp_path)
    rule, message = refusal(lambda: read(current, "a.md", section="data"))
    assert rule == "section-ambiguous"
    assert message == (
        'Section "data" matches several sections in a.md: Data Model | Data Flow. '
        "Give the full heading."
    )


def test_accented_heading_matches_across_normal_forms_and_case(tmp_path: Path) -> None:
    write(tmp_path, "a.md", doc_text("A", "## Café Notes\n\nà la carte\n\n## Other\n"))
    current = snap(tmp_path)
    decomposed = "cafe\u0301 notes"
    assert read(current, "a.md", section=decomposed)["section"] == "Café Notes"
    assert read(current, "a.md", section="CAFÉ")["section"] == "Café Notes"
    assert read(current, "a.md", section="café-notes")["section"] == "Café Notes"


def test_a_name_of_only_punctuation_is_not_found(tmp_path: Path) -> None:
    write(tmp_path, "a.md", doc_text("A", "## First\n\nx\n"))
    current = snap(tmp_path)
    rule, message = refusal(lambda: read(current, "a.md", section="---"))
    assert rule == "section-not-found"
    assert message == 'Section "---" not found in a.md. Available: First'


def test_document_without_sections_lists_none(tmp_path: Path) -> None:
    write(tmp_path, "a.md", doc_text("A", "# Only a title\n\ntext\n"))
    current = snap(tmp_path)
    _, message = refusal(lambda: read(current, "a.md", section="x"))
    assert message == 'Section "x" not found in a.md. Available: (none)'


def test_blank_section_means_the_whole_document(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    assert read(current, "domain/rules.md", section="  ") == read(current, "domain/rules.md")


def test_section_span_keeps_h3_and_fenced_hashes_and_stops_at_next_h2(tmp_path: Path) -> None:
    body = (
        "# Title\n\n## One\n\ntext\n\n### Deeper\n\n```\n## not a heading\n```\n\n"
        "## Two\n\nlast\n\n\n"
    )
    write(tmp_path, "a.md", doc_text("A", body))
    current = snap(tmp_path)
    one = read(current, "a.md", section="One")
    assert one["content"] == "## One\n\ntext\n\n### Deeper\n\n```\n## not a heading\n```"
    # issue 16: the section list (and the frontmatter) only when asked for
    assert "availableSections" not in one and "frontmatter" not in one
    asked = read(current, "a.md", section="One", frontmatter=True)
    assert asked["availableSections"] == ["One", "Two"]
    assert read(current, "a.md", section="Two")["content"] == "## Two\n\nlast"


def test_crlf_document_section_keeps_its_line_endings(tmp_path: Path) -> None:
    write(tmp_path, "a.md", b"---\r\ntitle: A\r\n---\r\n## One\r\nx\r\n## Two\r\ny\r\n")
    current = snap(tmp_path)
    assert read(current, "a.md", section="one")["content"] == "## One\r\nx"


def test_unknown_path_is_not_a_document(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    rule, message = refusal(lambda: read(current, "domain/nowhere.md"))
    assert rule == "not-a-document"
    assert message == "Not a document of this bank: domain/nowhere.md"


def test_not_a_document_carries_the_journal_explanation(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    asked: list[str] = []

    def note(path: str) -> str | None:
        asked.append(path)
        return "It was promoted to domain/terms.md on 2026-09-14 (journal j-1)."

    _, message = refusal(
        lambda: read(current, "./_inbox/x.md", lookup=PathLookup(not_a_document_note=note))
    )
    assert asked == ["_inbox/x.md"]
    assert message == (
        "Not a document of this bank: ./_inbox/x.md. "
        "It was promoted to domain/terms.md on 2026-09-14 (journal j-1)."
    )


def test_no_journal_explanation_keeps_the_plain_message(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    _, message = refusal(
        lambda: read(current, "gone.md", lookup=PathLookup(not_a_document_note=lambda p: None))
    )
    assert message == "Not a document of this bank: gone.md"


@pytest.mark.parametrize(
    ("given", "rule", "message"),
    [
        ("  ", "path-empty", "`path` is required."),
        ("a\\b.md", "path-backslash", 'Path contains a backslash; bank paths use "/": a\\b.md'),
        ("../x.md", "path-outside", "Path must stay inside the bank: ../x.md"),
        ("/etc/passwd", "path-outside", "Path must stay inside the bank: /etc/passwd"),
    ],
)
def test_path_refusals_reach_the_caller(
    fixture_bank: Path, given: str, rule: str, message: str
) -> None:
    current = snap(fixture_bank)
    assert refusal(lambda: read(current, given)) == (rule, message)


def test_absolute_dot_and_root_name_prefixed_paths_read_the_same_document(
    fixture_bank: Path,
) -> None:
    current = snap(fixture_bank)
    expected = read(current, "domain/rules.md")
    for given in (
        str(fixture_bank / "domain" / "rules.md"),
        "./domain/rules.md",
        "bank/domain/rules.md",  # the root directory's own name as a prefix
        "domain/../domain/rules.md",
    ):
        assert read(current, given) == expected


def test_non_text_document_is_refused_as_not_text(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    rule, message = refusal(lambda: read(current, "broken/latin1.md"))
    assert rule == "not-text"
    assert message == "broken/latin1.md is not UTF-8 text, so it cannot be read through mbank."


def test_invalid_yaml_document_is_read_with_recovered_frontmatter(fixture_bank: Path) -> None:
    result = read(snap(fixture_bank), "broken/bad-yaml.md", section="backoff", frontmatter=True)
    assert result["frontmatter"]["canonical_for"] == ["retry_policy"]
    assert result["content"].startswith("## Backoff")


def test_inbox_documents_are_readable(tmp_path: Path) -> None:
    write(tmp_path, "_inbox/note.md", doc_text("A note", "Captured.\n"))
    assert read(snap(tmp_path), "_inbox/note.md")["content"] == "Captured."


def test_document_without_frontmatter_has_empty_frontmatter(tmp_path: Path) -> None:
    write(tmp_path, "plain.md", "# Plain\n\nJust text.\n")
    result = read(snap(tmp_path), "plain.md")
    assert result["frontmatter"] == {}
    assert result["title"] == "Plain"


def test_a_leading_byte_order_mark_is_trimmed_like_whitespace(tmp_path: Path) -> None:
    write(tmp_path, "bom.md", "\ufeff\n# Title\n\nText.\n")
    write(tmp_path, "bom-front.md", "\ufeff---\ntitle: T\n---\n\nText.\n")
    current = snap(tmp_path)
    assert read(current, "bom.md")["content"] == "# Title\n\nText."
    assert read(current, "bom-front.md")["content"] == "Text."


def test_frontmatter_is_json_converted(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\ntitle: A\ndate: 2026-09-14\ncount: 3\n---\nbody\n")
    assert read(snap(tmp_path), "a.md")["frontmatter"] == {
        "title": "A",
        "date": "2026-09-14",
        "count": 3,
    }


def test_per_document_cap_truncates_to_400000_characters(tmp_path: Path) -> None:
    write(tmp_path, "big.md", doc_text("Big", "é" * 450_000 + "\n"))
    result = read(snap(tmp_path), "big.md")
    assert result["truncated"] is True
    assert len(result["content"]) == 400_000
    assert result["bytes"] == len(result["content"].encode("utf-8")) == 800_000


def test_a_document_at_the_cap_is_not_truncated(tmp_path: Path) -> None:
    write(tmp_path, "big.md", doc_text("Big", "a" * 400_000 + "\n"))
    result = read(snap(tmp_path), "big.md")
    assert result["truncated"] is False
    assert result["bytes"] == 400_000


def test_reads_never_write(fixture_plus: Path, assert_unchanged: Any) -> None:
    with assert_unchanged(fixture_plus):
        current = snap(fixture_plus)
        read(current, "domain/rules.md", section="пороги")
        read(current, ["domain/rules.md", "nope.md", "broken/latin1.md"])
    assert not (fixture_plus / ".mbank").exists()


# --------------------------------------------------------------------------------------------
# Batch
# --------------------------------------------------------------------------------------------


def sized_bank(root: Path, sizes: dict[str, int]) -> Snapshot:
    """Documents whose file sizes are exactly the given byte counts."""
    for path, size in sizes.items():
        head = doc_text(path, "## Part\n\n")
        write(root, path, head + "x" * (size - len(head) - 1) + "\n")
    current = snap(root)
    for path, size in sizes.items():
        assert current.docs[path].size == size
    return current


def test_batch_keeps_request_order_and_reports_totals(fixture_plus: Path, snapshot: Any) -> None:
    whole = read(snap(fixture_plus), ["orphan.md", "domain/rules.md", "conflict.md"])
    assert [doc["path"] for doc in whole["documents"]] == [
        "orphan.md",
        "domain/rules.md",
        "conflict.md",
    ]
    assert whole["bytes"] == sum(doc["bytes"] for doc in whole["documents"])
    assert whole["budgetBytes"] == BATCH_BUDGET
    assert "note" not in whole
    assert whole == snapshot


def test_section_parameter_applies_to_plain_strings_and_objects_use_their_own(
    fixture_plus: Path,
) -> None:
    result = read(
        snap(fixture_plus),
        [
            "domain/rules.md",
            {"path": "adr/ADR-001-queue-choice.md", "section": "Decision"},
            {"path": "orphan.md"},
        ],
        section="Invariants",
    )
    sections = [doc.get("section") for doc in result["documents"]]
    assert sections == ["Invariants", "Decision", None]
    assert result["failed"] == []


def test_a_failed_path_does_not_sink_the_batch(fixture_plus: Path) -> None:
    result = read(
        snap(fixture_plus),
        ["nope.md", "domain/rules.md", "../x.md", "broken/latin1.md", "orphan.md"],
    )
    assert [doc["path"] for doc in result["documents"]] == ["domain/rules.md", "orphan.md"]
    assert result["failed"] == [
        {"path": "nope.md", "error": "Not a document of this bank: nope.md"},
        {"path": "../x.md", "error": "Path must stay inside the bank: ../x.md"},
        {
            "path": "broken/latin1.md",
            "error": "broken/latin1.md is not UTF-8 text, so it cannot be read through mbank.",
        },
    ]


def test_missing_section_in_a_batch_is_a_failed_entry(fixture_plus: Path) -> None:
    result = read(
        snap(fixture_plus), [{"path": "domain/rules.md", "section": "Missing"}, "orphan.md"]
    )
    assert result["failed"] == [
        {
            "path": "domain/rules.md",
            "error": 'Section "Missing" not found in domain/rules.md. '
            "Available: Thresholds | Invariants | Пороги",
        }
    ]


def test_look_ahead_skips_a_document_that_would_overshoot(tmp_path: Path) -> None:
    current = sized_bank(tmp_path, {"a.md": 30_000, "b.md": 15_000, "c.md": 5_000})
    result = read(current, ["a.md", "b.md", "c.md"])
    assert [doc["path"] for doc in result["documents"]] == ["a.md", "c.md"]
    assert result["skipped"] == [
        {"path": "b.md", "title": "b.md", "bytes": 15_000, "availableSections": ["Part"]}
    ]
    assert result["bytes"] < BATCH_BUDGET


def test_first_document_is_returned_even_above_the_budget(tmp_path: Path) -> None:
    current = sized_bank(tmp_path, {"a.md": 50_000, "b.md": 2_000})
    result = read(current, ["a.md", "b.md"])
    assert [doc["path"] for doc in result["documents"]] == ["a.md"]
    assert result["bytes"] > BATCH_BUDGET
    assert [entry["path"] for entry in result["skipped"]] == ["b.md"]


def test_once_the_budget_is_spent_even_bad_paths_are_skipped(tmp_path: Path) -> None:
    current = sized_bank(tmp_path, {"a.md": 45_000})
    result = read(current, ["a.md", "nope.md", "a.md"])
    assert result["failed"] == []
    assert result["skipped"] == [
        {"path": "nope.md", "title": "", "bytes": 0, "availableSections": []},
        {"path": "a.md", "title": "a.md", "bytes": 45_000, "availableSections": ["Part"]},
    ]


def test_a_section_read_is_never_skipped_by_look_ahead(tmp_path: Path) -> None:
    current = sized_bank(tmp_path, {"a.md": 30_000, "b.md": 20_000})
    result = read(current, ["a.md", {"path": "b.md", "section": "Part"}])
    assert [doc["path"] for doc in result["documents"]] == ["a.md", "b.md"]
    assert result["documents"][1]["section"] == "Part"


def test_max_bytes_lowers_the_budget(tmp_path: Path) -> None:
    current = sized_bank(tmp_path, {"a.md": 3_000, "b.md": 3_000})
    result = read(current, ["a.md", "b.md"], max_bytes=5_000)
    assert result["budgetBytes"] == 5_000
    assert [doc["path"] for doc in result["documents"]] == ["a.md"]
    assert [entry["path"] for entry in result["skipped"]] == ["b.md"]
    assert "note" not in result


def test_max_bytes_above_the_ceiling_uses_the_ceiling_and_says_so(tmp_path: Path) -> None:
    current = sized_bank(tmp_path, {"a.md": 30_000, "b.md": 30_000})
    result = read(current, ["a.md", "b.md"], max_bytes=200_000)
    assert result["budgetBytes"] == 40_000
    assert [entry["path"] for entry in result["skipped"]] == ["b.md"]
    assert result["note"] == (
        "maxBytes 200000 is above the ceiling of 40000, so 40000 was used. A larger answer "
        "would reach you as a file path, not as text; read the skipped documents by section "
        "instead."
    )


def test_an_array_of_one_is_still_a_batch(fixture_plus: Path) -> None:
    result = read(snap(fixture_plus), ["orphan.md"])
    assert set(result) == {"documents", "failed", "skipped", "bytes", "budgetBytes"}


def test_single_read_equals_the_batch_entry(fixture_plus: Path) -> None:
    current = snap(fixture_plus)
    single = read(current, "domain/rules.md", section="Пороги")
    batch = read(current, [{"path": "domain/rules.md", "section": "Пороги"}])
    assert batch["documents"] == [single]


# --------------------------------------------------------------------------------------------
# The command line (spec 04 §9.2-9.4)
# --------------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_read_human_output(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    root = str(fixture_plus)
    outputs = {
        "single": run_cli(capsys, "--root", root, "read", "domain/rules.md"),
        "section": run_cli(
            capsys, "read", "domain/rules.md", "--section", "пороги", "--root", root
        ),
        "batch": run_cli(
            capsys,
            "--root",
            root,
            "read",
            "orphan.md",
            "nope.md",
            "domain/rules.md",
            "--section",
            "Invariants",
            "--max-bytes",
            "200000",
        ),
        "budget": run_cli(
            capsys, "--root", root, "read", "domain/rules.md", "orphan.md", "--max-bytes", "1000"
        ),
    }
    assert outputs["section"] == (
        0,
        "# domain/rules.md :: Пороги (181 bytes)\n## Пороги\n\n"
        "Пороги проверяются до оценки, поэтому задание ниже 60 баллов отклоняется на первом "
        "уровне.\n\n",
        "",
    )
    assert outputs["budget"][1].endswith(
        "skipped: orphan.md (581 bytes) — sections: Peak Load | Estimate\n"
    )
    assert {name: list(value) for name, value in outputs.items()} == snapshot


def test_cli_read_json_is_the_tool_result(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    code, out, _ = run_cli(capsys, "--root", str(fixture_plus), "--json", "read", "orphan.md")
    assert code == 0
    assert json.loads(out) == read(snap(fixture_plus), "orphan.md")


def test_cli_read_refusal_exits_1_with_the_message_on_stderr(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "--root", str(fixture_plus), "read", "broken/latin1.md")
    assert (code, out) == (1, "")
    assert err == "mbank: broken/latin1.md is not UTF-8 text, so it cannot be read through mbank.\n"


def test_cli_read_usage_errors_exit_2(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(fixture_plus)
    with pytest.raises(SystemExit) as low:
        run_cli(capsys, "--root", root, "read", "a.md", "b.md", "--max-bytes", "999")
    assert low.value.code == 2
    code, out, err = run_cli(capsys, "--root", root, "read", *[f"d{i}.md" for i in range(51)])
    assert (code, out) == (2, "")
    assert "read takes at most 50 paths" in err


def test_cli_read_writes_nothing(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str], assert_unchanged: Any
) -> None:
    with assert_unchanged(fixture_plus):
        run_cli(capsys, "--root", str(fixture_plus), "read", "domain/rules.md", "orphan.md")
    assert not (fixture_plus / ".mbank").exists()


# --------------------------------------------------------------------------------------------
# The corpus tier (opt-in, spec 07 §2.7 invariant 2)
# --------------------------------------------------------------------------------------------


@pytest.mark.corpus
def test_every_corpus_document_is_readable_and_every_section_addressable(
    corpus: dict[str, Path], assert_unchanged: Any
) -> None:
    for name, root in corpus.items():
        with assert_unchanged(root):
            current = snap(root)
            for path, doc in current.docs.items():
                if not doc.text_ok:
                    continue
                assert read(current, path)["path"] == path
                for section in doc.sections:
                    result = read(current, path, section=section.title)
                    assert result["section"] == section.title, (name, path, section.title)
                    assert result["content"].startswith("#"), (name, path, section.title)
            batch = read(current, list(current.docs)[:50])
            assert batch["documents"], name


def journal_line(record: dict[str, Any]) -> str:
    import json

    base = {"v": 1, "via": "cli", "mbank": "0.1.0", "intent": {}, "warnings": []}
    return json.dumps({**base, **record}) + "\n"


def test_cli_not_a_document_explains_a_promoted_and_a_discarded_note(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = fixture_plus / ".mbank" / "journal.jsonl"
    journal.parent.mkdir()
    journal.write_text(
        journal_line(
            {
                "id": "20260914T120000Z-aaaa",
                "time": "2026-09-14T12:00:00Z",
                "tool": "bank_promote",
                "from": "_inbox/idea.md",
                "to": "domain/idea.md",
                "ops": [
                    {"path": "_inbox/idea.md", "kind": "delete", "before": "x", "after": None},
                    {"path": "domain/idea.md", "kind": "create", "before": None, "after": "x"},
                ],
            }
        )
        + journal_line(
            {
                "id": "20260915T080000Z-bbbb",
                "time": "2026-09-15T08:00:00Z",
                "tool": "bank_discard",
                "reason": "a duplicate of the glossary",
                "ops": [{"path": "_inbox/dup.md", "kind": "delete", "before": "y", "after": None}],
            }
        ),
        encoding="utf-8",
    )
    root = str(fixture_plus)
    assert run_cli(capsys, "--root", root, "read", "_inbox/idea.md")[2] == (
        "mbank: Not a document of this bank: _inbox/idea.md. It was promoted to domain/idea.md "
        "on 2026-09-14 (journal 20260914T120000Z-aaaa).\n"
    )
    code, out, _ = run_cli(capsys, "--root", root, "read", "./_inbox/dup.md", "orphan.md")
    assert code == 0
    assert (
        "failed: ./_inbox/dup.md: Not a document of this bank: ./_inbox/dup.md. It was discarded "
        "on 2026-09-15 (journal 20260915T080000Z-bbbb), with the reason: a duplicate of the "
        "glossary\n"
    ) in out
    assert run_cli(capsys, "--root", root, "graph", "_inbox/idea.md")[2].startswith(
        "mbank: Not a document of this bank: _inbox/idea.md. It was promoted to domain/idea.md"
    )


def test_cli_reads_report_an_interrupted_write_and_still_answer(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str], assert_unchanged: Any
) -> None:
    wal = fixture_plus / ".mbank" / "wal"
    wal.mkdir(parents=True)
    (wal / "20260914T120000Z-cccc.json").write_text("{}", encoding="utf-8")
    notice = (
        "mbank: a write was interrupted (20260914T120000Z-cccc); the next write "
        "to this bank rolls it back.\n"
    )
    root = str(fixture_plus)
    with assert_unchanged(fixture_plus):
        for argv in (
            ("read", "orphan.md"),
            ("graph", "domain/rules.md"),
            ("changed", "2026-01-01"),
            ("drift",),
        ):
            code, out, err = run_cli(capsys, "--root", root, *argv)
            assert (code, err) == (0, notice), argv
            assert out


def test_a_section_read_answers_path_title_status_and_the_section(fixture_bank: Path) -> None:
    result = read(snap(fixture_bank), "domain/rules.md", section="Thresholds")
    assert list(result) == ["path", "title", "status", "section", "content", "bytes", "truncated"]
    assert result["status"] == "active"
    whole = read(snap(fixture_bank), "domain/rules.md")
    assert list(whole) == [
        "path",
        "title",
        "frontmatter",
        "content",
        "bytes",
        "truncated",
        "availableSections",
    ]
