"""Templates for new documents (spec 03 §4.4–§4.6): the bank-first, then-shipped lookup with
target-path wildcards, unwrapping a wrapper (CommonMark fences) or a plain template, retitling,
and the key order, placeholders and dates of a new document's frontmatter."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from mbank.reducers.templates import (
    instantiate,
    is_placeholder,
    new_frontmatter,
    retitle,
    target_matches,
    template_source,
)
from mbank.shipped_files import shipped_templates
from mbank.snapshot import Bank, Snapshot

SHIPPED = shipped_templates()


def bank_of(root: Path, files: dict[str, str | bytes]) -> Snapshot:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return Bank(root).refresh()


def template(kind: str, target_path: str | None, *, template_for: str | None = None) -> str:
    lines = ["---", f"title: {kind} template", f"doc_kind: {kind}", "doc_function: template"]
    lines.append("purpose: A template for tests.")
    if template_for is not None:
        lines.append(f"template_for: {template_for}")
    if target_path is not None:
        lines.append(f"template_target_path: {target_path}")
    lines += ["status: active", "---", f"# {kind} template", ""]
    return "\n".join(lines)


def lookup(snapshot: Snapshot, kind: str, target: str) -> str | None:
    found = template_source(snapshot, SHIPPED, kind, target)
    return found.path if found is not None else None


# --------------------------------------------------------------------------------------------
# Target patterns: placeholder parts are wildcards (mbank)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "target", "matches"),
    [
        (
            "adr/ADR-YYYYMMDDTHHMMSSZ-short-decision-name.md",
            "adr/ADR-20260914T120000Z-two-formats-one-model.md",
            True,
        ),
        ("adr/ADR-YYYYMMDDTHHMMSSZ-short-decision-name.md", "adr/queue-choice.md", False),
        ("features/FT-XXX/brief.md", "features/FT-7/brief.md", True),
        ("features/FT-XXX/brief.md", "features/FT-7/design.md", False),
        ("features/FT-XXX/brief.md", "features/FT-7/sub/brief.md", False),
        ("epics/EP-XXX/charter.md", "epics/EP-001/charter.md", True),
        ("processes/PROCESS-<id>-process-card.md", "processes/PROCESS-3-process-card.md", True),
        ("processes/PROCESS-<id>-process-card.md", "processes/PROCESS-3-handoff.md", False),
        (
            "features/FT-XXX/use-cases/README.md",
            "features/FT-7/use-cases/README.md",
            True,
        ),
        (
            "features/FT-XXX/ui-reference/README.md",
            "features/FT-7/use-cases/README.md",
            False,
        ),
        ("use-cases/UC-XXX-short-name.md", "use-cases/UC-7-checkout.md", False),
        ("use-cases/UC-XXX-short-name.md", "use-cases/UC-7-short-name.md", True),
        ("notes/YYYY-MM-DD.md", "notes/2026-09-14.md", True),
        ("a.b/x.md", "aXb/x.md", False),
    ],
)
def test_a_target_pattern_reads_each_placeholder_part_as_a_wildcard(
    pattern: str, target: str, matches: bool
) -> None:
    assert target_matches(pattern, target) is matches


@pytest.mark.parametrize(
    "value",
    [
        "YYYY-MM-DD",
        "YYYYMMDDTHHMMSSZ",
        "<one sentence>",
        "ADR-ID: <short decision title>",
        "FT-XXX brief",
        "  <padded>  ",
    ],
)
def test_placeholder_values_are_recognised(value: str) -> None:
    assert is_placeholder(value)


@pytest.mark.parametrize("value", ["proposed", "humans_and_agents", "FT-XXXL", 3, None, "a<b"])
def test_real_values_are_not_placeholders(value: Any) -> None:
    assert not is_placeholder(value)


# --------------------------------------------------------------------------------------------
# The shipped lookup (§4.4 step 2): the spec's examples
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "target", "expected"),
    [
        ("adr", "adr/ADR-20260914T120000Z-short-name.md", "flows/templates/adr/ADR-ID.md"),
        ("adr", "adr/queue-choice.md", "flows/templates/adr/ADR-ID.md"),
        ("use_case", "use-cases/UC-7-checkout.md", "flows/templates/use-case/UC-XXX.md"),
        ("prompt", "prompts/PROMPT-3-review.md", "flows/templates/prompt/PROMPT-ID.md"),
        ("prd", "prd/PRD-2-billing.md", "flows/templates/prd/PRD-ID.md"),
        ("feature", "features/FT-7/brief.md", "flows/templates/feature/brief.md"),
        ("feature", "features/FT-7/notes.md", None),
        ("feature", "features/FT-7/README.md", "flows/templates/feature/README.md"),
        ("epic", "epics/EP-1/charter.md", "flows/templates/epic/charter.md"),
        ("epic", "epics/EP-1/risks.md", "flows/templates/epic/risks.md"),
        ("epic", "epics/EP-1/plan.md", None),
        ("process", "processes/onboarding.md", None),
        (
            "process",
            "processes/PROCESS-4-process-card.md",
            "flows/templates/process/process-card.md",
        ),
        ("domain", "domain/x.md", None),
        ("engineering", "engineering/x.md", None),
        ("product", "product/x.md", None),
        ("ops", "ops/x.md", None),
        ("", "domain/x.md", None),
        ("../adr", "adr/x.md", None),
    ],
)
def test_the_shipped_lookup_answers_the_spec_examples(
    tmp_path: Path, kind: str, target: str, expected: str | None
) -> None:
    snapshot = bank_of(tmp_path / "bank", {})
    assert lookup(snapshot, kind, target) == expected


def test_shipped_lookup_matches_the_target_pattern_before_the_file_name(tmp_path: Path) -> None:
    """mbank: `features/FT-7/feature.md` is the target pattern of the short and the large
    feature templates; the first in path order (large.md) wins even unmaterialised."""
    snapshot = bank_of(tmp_path / "bank", {})
    assert lookup(snapshot, "feature", "features/FT-7/feature.md") == (
        "flows/templates/feature/large.md"
    )
    assert lookup(snapshot, "feature", "features/FT-7/short.md") == (
        "flows/templates/feature/short.md"
    )


def test_the_shipped_lookup_is_not_recursive(tmp_path: Path) -> None:
    """The feature-support templates sit in `feature/support/`: reached only once materialised.
    Until then the alias directory `feature/` answers by file name alone (upstream parity)."""
    snapshot = bank_of(tmp_path / "bank", {})
    assert lookup(snapshot, "feature-support", "features/FT-7/runtime-surfaces.md") is None
    assert lookup(snapshot, "feature-support", "features/FT-7/use-cases/README.md") == (
        "flows/templates/feature/README.md"
    )


# --------------------------------------------------------------------------------------------
# The bank's own templates win (§4.4 step 1)
# --------------------------------------------------------------------------------------------


def materialised(root: Path, *extra: tuple[str, str]) -> Snapshot:
    files: dict[str, str | bytes] = dict(SHIPPED)
    files.update(dict(extra))
    return bank_of(root, files)


def test_a_materialised_copy_wins_over_the_shipped_template(tmp_path: Path) -> None:
    edited = SHIPPED["flows/templates/adr/ADR-ID.md"].replace("## Context", "## Our Context")
    snapshot = materialised(tmp_path / "bank", ("flows/templates/adr/ADR-ID.md", edited))
    found = template_source(snapshot, SHIPPED, "adr", "adr/ADR-20260914T120000Z-x.md")
    assert found is not None and found.path == "flows/templates/adr/ADR-ID.md"
    assert "## Our Context" in found.raw


def test_materialised_support_templates_are_reached_by_their_target_paths(tmp_path: Path) -> None:
    """mbank: upstream matched the file name alone, so every support `README.md` target got
    the UI reference template; the target pattern tells them apart."""
    snapshot = materialised(tmp_path / "bank")
    assert lookup(snapshot, "feature-support", "features/FT-7/use-cases/README.md") == (
        "flows/templates/feature/support/use-cases.md"
    )
    assert lookup(snapshot, "feature-support", "features/FT-7/ui-reference/README.md") == (
        "flows/templates/feature/support/ui-reference.md"
    )
    assert lookup(snapshot, "feature-support", "features/FT-7/runtime-surfaces.md") == (
        "flows/templates/feature/support/runtime-surfaces.md"
    )
    assert lookup(snapshot, "feature-support", "features/FT-7/other/README.md") == (
        "flows/templates/feature/support/ui-reference.md"
    )


def test_bank_candidates_come_from_template_for_or_the_kind_directory(tmp_path: Path) -> None:
    snapshot = bank_of(
        tmp_path / "bank",
        {
            "custom/decision.md": template("adr", None, template_for="adr"),
            "flows/templates/use-case/case.md": template("use_case", None),
            "flows/templates/runbook/one.md": template("ops", None),
            "flows/templates/adr/README.md": template("adr", None).replace(
                "doc_function: template", "doc_function: index"
            ),
        },
    )
    assert lookup(snapshot, "adr", "adr/x.md") == "custom/decision.md"
    assert lookup(snapshot, "use_case", "use-cases/UC-1-x.md") == (
        "flows/templates/use-case/case.md"
    )
    assert lookup(snapshot, "runbook", "ops/x.md") == "flows/templates/runbook/one.md"


def test_bank_choice_order_pattern_then_pattern_name_then_own_name_then_single(
    tmp_path: Path,
) -> None:
    root = tmp_path / "bank"
    snapshot = bank_of(
        root,
        {
            "flows/templates/guide/a.md": template("guide", "guides/G-<id>/start.md"),
            "flows/templates/guide/b.md": template("guide", "elsewhere/notes.md"),
            "flows/templates/guide/notes.md": template("guide", None),
            "flows/templates/guide/README.md": template("guide", None),
        },
    )
    assert lookup(snapshot, "guide", "guides/G-1/start.md") == "flows/templates/guide/a.md"
    assert lookup(snapshot, "guide", "guides/notes.md") == "flows/templates/guide/b.md"
    assert lookup(snapshot, "guide", "guides/other.md") is None
    single = bank_of(
        tmp_path / "single",
        {
            "flows/templates/guide/only.md": template("guide", None),
            "flows/templates/guide/README.md": template("guide", None),
        },
    )
    assert lookup(single, "guide", "guides/anything.md") == "flows/templates/guide/only.md"


def test_a_non_text_template_is_never_a_candidate(tmp_path: Path) -> None:
    snapshot = bank_of(
        tmp_path / "bank",
        {"flows/templates/adr/broken.md": b"---\ntitle: Caf\xe9\ndoc_function: template\n---\n"},
    )
    assert lookup(snapshot, "adr", "adr/x.md") == "flows/templates/adr/ADR-ID.md"


def test_the_fixture_plain_template_is_found_in_its_kind_directory(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    assert lookup(snapshot, "feature", "features/FT-002/brief.md") == (
        "flows/templates/feature/brief.md"
    )
    assert lookup(snapshot, "adr", "adr/ADR-002-x.md") == "flows/templates/adr/ADR-ID.md"


# --------------------------------------------------------------------------------------------
# Unwrapping (§4.5)
# --------------------------------------------------------------------------------------------

WRAPPER = """\
---
title: Guide Template
doc_kind: guide
doc_function: template
template_for: guide
status: active
---
# Guide Template

```yaml
title: not this one
```

## Instantiated Frontmatter

```text
not: yaml
```

```yaml
---
title: <Guide title>
status: draft
audience: humans_and_agents
---
ignored: after the second marker
```

## Instantiated Body: Compact Default

````markdown
# <Guide title>

## Steps

```sh
make guide
```

The end.
````
"""


def test_a_wrapper_gives_its_yaml_fence_and_its_markdown_fence() -> None:
    unwrapped = instantiate(WRAPPER)
    assert unwrapped.wrapper is True
    assert unwrapped.base == {
        "title": "<Guide title>",
        "status": "draft",
        "audience": "humans_and_agents",
    }
    assert unwrapped.body == ("# <Guide title>\n\n## Steps\n\n```sh\nmake guide\n```\n\nThe end.")


def test_the_prompt_templates_inner_fence_is_kept_whole() -> None:
    """mbank: a fence closes only on a fence of the same character at least as long."""
    unwrapped = instantiate(SHIPPED["flows/templates/prompt/PROMPT-ID.md"])
    assert "```prompt\nYou are helping with {{task}}." in unwrapped.body
    assert unwrapped.body.rstrip().endswith("with its reason.*")
    assert "## Change Log" in unwrapped.body
    assert unwrapped.base["variables"] == []


INDEXES = ("flows/templates/README.md", "flows/templates/epic/README.md")


@pytest.mark.parametrize("path", sorted(set(SHIPPED) - set(INDEXES)))
def test_every_shipped_wrapper_unwraps(path: str) -> None:
    unwrapped = instantiate(SHIPPED[path], path)
    assert unwrapped.wrapper and unwrapped.base and unwrapped.body.startswith("# ")


@pytest.mark.parametrize("path", INDEXES)
def test_the_two_shipped_indexes_are_plain(path: str) -> None:
    assert instantiate(SHIPPED[path], path).wrapper is False


def test_yaml_that_does_not_load_is_recovered_line_by_line_and_a_list_gives_nothing() -> None:
    broken = WRAPPER.replace("status: draft", "purpose: Read when: things break")
    assert instantiate(broken).base["purpose"] == "Read when: things break"
    listed = WRAPPER.replace(
        "---\ntitle: <Guide title>\nstatus: draft\naudience: humans_and_agents\n---\n"
        "ignored: after the second marker",
        "- a\n- b",
    )
    assert instantiate(listed).base == {}


def test_without_both_sections_a_template_is_plain(fixture_bank: Path) -> None:
    raw = (fixture_bank / "flows/templates/feature/brief.md").read_text(encoding="utf-8")
    unwrapped = instantiate(raw, "flows/templates/feature/brief.md")
    assert unwrapped.wrapper is False
    assert "doc_function" not in unwrapped.base
    assert unwrapped.base["delivery_status"] == "planned"
    assert unwrapped.body.startswith("# FT-XXX Brief\n\n## What")
    assert unwrapped.body == unwrapped.body.strip()
    only_front = WRAPPER.split("## Instantiated Body")[0]
    assert instantiate(only_front).wrapper is False


def test_a_crlf_wrapper_unwraps_to_lf_text() -> None:
    unwrapped = instantiate(WRAPPER.replace("\n", "\r\n"))
    assert unwrapped.wrapper and "\r" not in unwrapped.body
    assert unwrapped.base["status"] == "draft"


# --------------------------------------------------------------------------------------------
# Retitling
# --------------------------------------------------------------------------------------------


def test_retitle_replaces_the_first_atx_h1_and_nothing_else() -> None:
    body = "Intro\n===\n\n```md\n# Not this\n```\n\n# Old Title\n\n# Second\n"
    assert retitle(body, "New") == ("Intro\n===\n\n```md\n# Not this\n```\n\n# New\n\n# Second\n")


def test_retitle_prepends_a_heading_when_there_is_none() -> None:
    assert retitle("Just prose.", "New") == "# New\n\nJust prose."


# --------------------------------------------------------------------------------------------
# The new document's frontmatter (§4.6)
# --------------------------------------------------------------------------------------------

BASE = {
    "title": "ADR-ID: <short decision title>",
    "doc_kind": "adr",
    "doc_function": "canonical",
    "template_for": "adr",
    "template_target_path": "adr/ADR-YYYYMMDD.md",
    "purpose": "<one sentence>",
    "derived_from": ["<the document this rests on>"],
    "canonical_for": ["<key>"],
    "status": "draft",
    "decision_status": "proposed",
    "date": "YYYY-MM-DD",
    "owner": "<team>",
    "audience": "humans_and_agents",
    "must_not_define": ["current_system_state"],
}


def build(**overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "title": "Two Formats",
        "doc_kind": "adr",
        "doc_function": "canonical",
        "purpose": "Why one model.",
        "derived_from": ["../domain/model.md"],
        "canonical_for": [],
        "must_not_define": None,
        "status": "active",
        "base": BASE,
        "today": "2026-09-14",
        "warn_placeholders": True,
    }
    arguments.update(overrides)
    return new_frontmatter(**arguments)


def test_the_key_order_is_callers_fields_then_templates_then_extra() -> None:
    made = build(extra={"status": "draft", "reviewed_on": "2026-09-14"})
    assert list(made.data) == [
        "title",
        "doc_kind",
        "doc_function",
        "purpose",
        "derived_from",
        "status",
        "decision_status",
        "date",
        "owner",
        "audience",
        "must_not_define",
        "reviewed_on",
    ]
    assert made.data["status"] == "draft"
    assert made.data["date"] == dt.date(2026, 9, 14)
    assert made.data["must_not_define"] == ["current_system_state"]


def test_a_placeholder_outside_date_is_copied_with_a_warning() -> None:
    made = build()
    assert made.data["owner"] == "<team>"
    assert made.warnings == (
        'Template left a placeholder in "owner": <team>. Fill it before activating.',
    )


def test_a_promotion_skips_placeholders_silently_but_fills_the_date() -> None:
    made = build(warn_placeholders=False)
    assert "owner" not in made.data and made.warnings == ()
    assert made.data["date"] == dt.date(2026, 9, 14)


def test_an_empty_must_not_define_keeps_the_templates_list_out() -> None:
    made = build(must_not_define=[])
    assert made.data["must_not_define"] == []
    assert list(made.data).index("must_not_define") == list(made.data).index("status") - 1


def test_the_templates_derived_from_and_canonical_for_never_flow_in() -> None:
    made = build(derived_from=[], canonical_for=[])
    assert "derived_from" not in made.data and "canonical_for" not in made.data
    assert "template_for" not in made.data and "template_target_path" not in made.data


def test_extra_may_override_anything_in_place() -> None:
    made = build(extra={"doc_function": "derived", "canonical_for": ["k"]})
    assert list(made.data)[2] == "doc_function" and made.data["doc_function"] == "derived"
    assert list(made.data)[-1] == "canonical_for"
