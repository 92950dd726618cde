"""The contract parsed out of `dna/` prose (spec 01 §9, 05 §3, 07 §3.4)."""

from __future__ import annotations

import time

import pytest

from mbank.contract import EMPTY_CONTRACT, parse_contract, table_cells
from mbank.model import Contract


def contract_of(*texts: str, has_principles: bool = False) -> Contract:
    """Parse inline texts as dna/a.md, dna/b.md, … in that order."""
    docs = [(f"dna/{chr(ord('a') + i)}.md", text) for i, text in enumerate(texts)]
    return parse_contract(docs, has_principles=has_principles)


# --- table cells ---------------------------------------------------------------------------


def test_table_cells_strip_one_outer_pipe_and_each_cell() -> None:
    assert table_cells("  | a | `b` |  c|") == ["a", "`b`", "c"]


def test_table_cells_without_outer_pipes() -> None:
    assert table_cells("a | b") == ["a", "b"]


def test_table_cells_keep_empty_cells() -> None:
    assert table_cells("|| x |") == ["", "x"]


# --- degraded mode -------------------------------------------------------------------------


def test_no_dna_documents_gives_the_degraded_contract() -> None:
    contract = parse_contract([], has_principles=False)
    assert contract == EMPTY_CONTRACT
    assert contract.present is False
    assert contract.source == ()
    assert contract.roots == ()
    assert not contract.requires_derived_from
    assert not contract.forbids_cycles
    assert contract.declared_in == {}


def test_documents_outside_dna_are_not_read() -> None:
    contract = parse_contract(
        [("domain/rules.md", "| status | `draft` |\nCyclic dependencies are forbidden.")],
        has_principles=False,
    )
    assert contract == EMPTY_CONTRACT


def test_present_with_sorted_sources_even_when_nothing_is_declared() -> None:
    contract = parse_contract([("dna/z.md", "prose"), ("dna/sub/a.md", "")], has_principles=False)
    assert contract.present is True
    assert contract.source == ("dna/sub/a.md", "dna/z.md")
    assert contract.statuses == ()
    assert contract.roots == ()


# --- enumeration rows (05 §3.1) ------------------------------------------------------------


def test_status_row_with_slash_separator_declares_values_and_skips_the_enum_type() -> None:
    contract = contract_of("| `status` | enum | `draft` / `active` / `archived` |")
    assert contract.statuses == ("draft", "active", "archived")


def test_comma_separator_and_dotted_token_is_not_a_value() -> None:
    contract = contract_of("| doc_kind | `governance`, `feature` (see `brief.md`) |")
    assert contract.doc_kinds == ("governance", "feature")


def test_head_must_be_exactly_the_field_name() -> None:
    contract = contract_of(
        "| Status | `draft` |",
        "| `status` field | `draft` |",
        "| statuses | `draft` |",
    )
    assert contract.statuses == ()


def test_capitalised_tokens_are_not_values() -> None:
    contract = contract_of("| `status` | `Draft` / `ACTIVE` / `archived` |")
    assert contract.statuses == ("archived",)


@pytest.mark.parametrize(
    "noise", ["enum", "string", "array", "object", "md", "yaml", "true", "false"]
)
def test_noise_words_are_not_values(noise: str) -> None:
    contract = contract_of(f"| `decision_status` | `{noise}` | `accepted` |")
    assert contract.decision_statuses == ("accepted",)


def test_the_field_name_itself_is_not_a_value() -> None:
    contract = contract_of("| `delivery_status` | `delivery_status` is one of `planned` |")
    assert contract.delivery_statuses == ("planned",)


def test_tokens_with_digits_underscore_and_dash_are_values_but_not_starting_with_digit() -> None:
    contract = contract_of("| doc_function | `risk_register`, `v2-draft`, `2nd` |")
    assert contract.doc_functions == ("risk_register", "v2-draft")


def test_all_five_fields_are_read_from_any_table_in_any_order() -> None:
    text = "\n".join(
        [
            "| Field | Values | Purpose |",
            "|---|---|---|",
            "| `doc_kind` | `governance`, `project` | what the document is |",
            "| `doc_function` | `canonical` / `index` | its role |",
            "| `status` | `draft` | publication |",
            "| `delivery_status` | `planned` | delivery |",
            "| `decision_status` | `proposed` | decisions |",
        ]
    )
    contract = contract_of(text)
    assert contract.doc_kinds == ("governance", "project")
    assert contract.doc_functions == ("canonical", "index")
    assert contract.statuses == ("draft",)
    assert contract.delivery_statuses == ("planned",)
    assert contract.decision_statuses == ("proposed",)


def test_both_table_separator_styles_are_plain_rows_that_declare_nothing() -> None:
    text = "| Field | Values |\n|-|-|\n| `status` | `draft` |\n\n| F | V |\n|---|---|\n"
    text += "| `status` | `active` |"
    assert contract_of(text).statuses == ("draft", "active")


def test_indented_table_rows_are_read() -> None:
    assert contract_of("   | status | `draft` |").statuses == ("draft",)


def test_a_row_needs_at_least_two_cells() -> None:
    assert contract_of("| `status` `draft`").statuses == ()


def test_bullets_and_prose_declare_nothing() -> None:
    contract = contract_of("- `status`: `draft`\nstatus | `active` |\n`status` | `archived`")
    assert contract.statuses == ()


def test_values_keep_first_seen_order_without_duplicates_across_documents() -> None:
    contract = contract_of(
        "| status | `active` / `draft` |",
        "| status | `draft` / `archived` / `active` |",
    )
    assert contract.statuses == ("active", "draft", "archived")


def test_rows_inside_fenced_code_still_count() -> None:
    contract = contract_of("```\n| status | `draft` |\n```")
    assert contract.statuses == ("draft",)


def test_declared_in_names_the_first_document_declaring_each_value() -> None:
    contract = parse_contract(
        [
            ("dna/b.md", "| status | `draft` / `archived` |\n| doc_kind | `adr` |"),
            ("dna/a.md", "| status | `draft` / `active` |"),
        ],
        has_principles=False,
    )
    assert contract.statuses == ("draft", "active", "archived")
    assert contract.declared_in == {
        ("status", "draft"): "dna/a.md",
        ("status", "active"): "dna/a.md",
        ("status", "archived"): "dna/b.md",
        ("doc_kind", "adr"): "dna/b.md",
    }


def test_declared_in_keeps_the_same_value_apart_per_field() -> None:
    contract = contract_of("| status | `draft` |", "| delivery_status | `draft` |")
    assert contract.declared_in == {
        ("status", "draft"): "dna/a.md",
        ("delivery_status", "draft"): "dna/b.md",
    }


# --- roots ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "The root document is `principles.md`.",
        "the ROOT DOCUMENT IS principles.md and nothing else",
        "The root document is [`principles.md`](principles.md).",
        "The root document is [principles.md](principles.md).",
        "The root document is `./principles.md`.",
    ],
)
def test_english_root_sentence(line: str) -> None:
    assert contract_of(line).roots == ("dna/principles.md",)


@pytest.mark.parametrize(
    "line",
    [
        "Корневой документ — `principles.md`, не имеет `derived_from`.",
        "Корневой документ - principles.md",
        "корневой документ – [principles.md](principles.md)",
        "Корневой документ: `./principles.md`",
        "Корневой документ это `principles.md`",
        "Корневой документ `principles.md`.",
    ],
)
def test_russian_root_sentence(line: str) -> None:
    assert contract_of(line).roots == ("dna/principles.md",)


def test_russian_root_needs_a_file_name_right_after_the_separator() -> None:
    assert contract_of("Корневой документ dependency tree.").roots == ()


def test_roots_are_always_placed_in_dna() -> None:
    assert contract_of("The root document is `dna/x.md`.").roots == ("dna/dna/x.md",)


def test_only_one_leading_dot_slash_is_removed() -> None:
    assert contract_of("The root document is ././x.md").roots == ("dna/./x.md",)


def test_one_root_per_line_in_order_without_duplicates() -> None:
    contract = contract_of(
        "The root document is `b.md`. The root document is `c.md`.\nThe root document is `a.md`.",
        "Корневой документ — `b.md`.",
    )
    assert contract.roots == ("dna/b.md", "dna/a.md")


def test_the_leftmost_root_sentence_on_a_line_wins_across_languages() -> None:
    line = "Корневой документ — `ru.md`; the root document is `en.md`."
    assert contract_of(line).roots == ("dna/ru.md",)


def test_english_root_pattern_is_ascii_only() -> None:
    assert contract_of("The root document is `принципы.md`.").roots == ()


def test_principles_is_the_fallback_root_only_without_a_root_sentence() -> None:
    assert contract_of("no roots here", has_principles=True).roots == ("dna/principles.md",)
    assert contract_of("no roots here", has_principles=False).roots == ()
    declared = contract_of("The root document is `core.md`.", has_principles=True)
    assert declared.roots == ("dna/core.md",)


# --- requires_derived_from -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Every `active` non-root document must define `derived_from`.",
        "documents MUST DEFINE derived_from",
        "prose\n\n```\nmust define `derived_from\n```",
    ],
)
def test_english_derived_from_requirement(text: str) -> None:
    assert contract_of(text).requires_derived_from is True


@pytest.mark.parametrize(
    "text",
    [
        "Для каждого `active` non-root документа `derived_from` обязательно.",
        "Поле `derived_from` является обязательным.",
        "ОБЯЗАТЕЛЕН derived_from для active",
        "Каждый документ должен определять `derived_from`.",
        "Запись должна указывать `derived_from`.",
        "`derived_from` должно быть указано.",
        "Документы должны определить `derived_from`.",
    ],
)
def test_russian_derived_from_requirement(text: str) -> None:
    assert contract_of(text).requires_derived_from is True


@pytest.mark.parametrize(
    "text",
    [
        "Every document defines `derived_from`.",
        "The `derived_from` field lists direct upstream documents.",
        "Поле обязательно.\n`derived_from` перечисляет upstream.",
        "`derived_from` указывает, кто должен читать.",
        "Его должность указана в `derived_from`.",
        "для `active` non-root задан `derived_from`",
    ],
)
def test_no_derived_from_requirement(text: str) -> None:
    assert contract_of(text).requires_derived_from is False


# --- forbids_cycles ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Cyclic dependencies are forbidden.",
        "CYCLIC DEPENDENCIES ARE FORBIDDEN",
        "Циклические зависимости запрещены.",
        "циклическая зависимость запрещена",
    ],
)
def test_cycle_rule(text: str) -> None:
    assert contract_of(text).forbids_cycles is True


@pytest.mark.parametrize(
    "text",
    [
        "Cyclic dependencies are\nforbidden.",
        "Cycles are forbidden.",
        "Циклические зависимости нежелательны.",
    ],
)
def test_no_cycle_rule(text: str) -> None:
    assert contract_of(text).forbids_cycles is False


def test_booleans_are_read_from_any_dna_document() -> None:
    contract = contract_of(
        "nothing", "Cyclic dependencies are forbidden.", "must define derived_from"
    )
    assert contract.forbids_cycles is True
    assert contract.requires_derived_from is True


# --- the starter shape (05 §3) -------------------------------------------------------------

STARTER_GOVERNANCE = """\
## Source Dependency Tree

The root document is `principles.md`.
Every `active` non-root document must define `derived_from`.
Cyclic dependencies are forbidden.

## Governance-specific Frontmatter Fields

| Field | Values | Purpose |
|---|---|---|
| `doc_kind` | `governance`, `project`, `product`, `domain`, `prd`, `use_case`, `feature`, \
`feature-support`, `epic`, `process`, `prompt`, `engineering`, `ops`, `adr` | What it is. |
| `doc_function` | `canonical`, `index`, `template`, `reference`, `derived`, `roadmap`, \
`risk_register`, `decision_log`, `subissue_registry` | Its role. |
"""

STARTER_FRONTMATTER = """\
## Required Fields

| Field | Meaning | Values |
|-|-|-|
| `title` | The document title. | any text |
| `doc_kind` | What the document is; see the governance table. | listed in governance |
| `status` | Publication state. | `draft` / `active` / `archived` |

## Optional Fields

| Field | Meaning | Values |
|-|-|-|
| `delivery_status` | Delivery state. | `planned` / `in_progress` / `done` / `cancelled` |
| `decision_status` | Decision state. | `proposed` / `accepted` / `superseded` / `rejected` |

- `draft` — bullets under a table declare nothing: `bullet-only`.
"""


def test_starter_shaped_contract() -> None:
    contract = parse_contract(
        [
            ("dna/frontmatter.md", STARTER_FRONTMATTER),
            ("dna/governance.md", STARTER_GOVERNANCE),
            ("dna/principles.md", "# Principles"),
        ],
        has_principles=True,
    )
    assert contract.doc_kinds == (
        "governance",
        "project",
        "product",
        "domain",
        "prd",
        "use_case",
        "feature",
        "feature-support",
        "epic",
        "process",
        "prompt",
        "engineering",
        "ops",
        "adr",
    )
    assert contract.doc_functions == (
        "canonical",
        "index",
        "template",
        "reference",
        "derived",
        "roadmap",
        "risk_register",
        "decision_log",
        "subissue_registry",
    )
    assert contract.statuses == ("draft", "active", "archived")
    assert contract.delivery_statuses == ("planned", "in_progress", "done", "cancelled")
    assert contract.decision_statuses == ("proposed", "accepted", "superseded", "rejected")
    assert contract.roots == ("dna/principles.md",)
    assert contract.requires_derived_from is True
    assert contract.forbids_cycles is True
    assert contract.declared_in[("status", "draft")] == "dna/frontmatter.md"
    assert contract.declared_in[("doc_kind", "adr")] == "dna/governance.md"


# --- scale ---------------------------------------------------------------------------------


def test_a_ten_thousand_row_table_parses_in_linear_time() -> None:
    rows = "\n".join(f"| status | `v{i}` / `enum` / `x{i}.md` |" for i in range(10_000))
    prose = "\n".join(
        f"The root document is `r{i % 7}.md`. Корневой документ — `k{i % 5}.md`"
        for i in range(10_000)
    )
    started = time.perf_counter()
    contract = contract_of("| Field | Values |\n|-|-|\n" + rows, prose)
    elapsed = time.perf_counter() - started
    assert len(contract.statuses) == 10_000
    assert contract.statuses[-1] == "v9999"
    assert len(contract.roots) == 7
    # Generous bound: a quadratic scan of 10,000 rows takes minutes, a linear one milliseconds.
    assert elapsed < 2.0
