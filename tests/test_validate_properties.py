"""Property tests of validation (spec 07 §4.4): on banks generated from random documents —
random frontmatter including invalid YAML, random links, edges, claims and directories —
`validate` never raises, gives the same findings for the same input, sorts them, and its
partial and incremental forms agree with a run from scratch after any random change."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from validate_edits import Entry, apply_virtually, identity, new_findings, plans_for

from mbank.parse import parse_text
from mbank.snapshot import Snapshot, build_snapshot
from mbank.validate import findings, findings_for, findings_uncached, validate
from mbank.validation import RULE_ORDER

GOVERNANCE = (
    "---\ntitle: Governance\n---\nThe root document is `principles.md`.\n"
    "Every `active` non-root document must define `derived_from`.\n"
    "Cyclic dependencies are forbidden.\n"
    "| `status` | `draft` / `active` |\n| `doc_function` | `canonical` / `index` |\n"
    "| Directory | Layer |\n|---|---|\n| `scratch` | `sandbox` |\n"
)
PATHS = [
    "README.md",
    "a.md",
    "b.md",
    "domain/README.md",
    "domain/rules.md",
    "domain/b.md",
    "features/FT-1/brief.md",
    "features/FT-1/a.md",
    "flows/templates/brief.md",
    "_inbox/note.md",
    "dna/principles.md",
]
REFS = [
    "a.md",
    "b.md",
    "../a.md",
    "../../a.md",
    "rules.md",
    "../domain/rules.md",
    "../../domain/rules.md",
    "brief.md",
    "README.md",
    "../../../out.md",
    "https://example.com/x.md",
    "",
    "gone.md",
]

refs = st.sampled_from(REFS)
frontmatter_lines = st.one_of(
    st.sampled_from(
        [
            "title: T",
            "status: active",
            "status: draft",
            "status: weird",
            "doc_function: index",
            "doc_function: template",
            "doc_function: odd",
            "canonical_for: [k1]",
            "canonical_for: [k1, k2]",
            "must_not_define: [k1]",
            "purpose: broken: yaml",
            "title: again",
            "decision_status: maybe",
            "- stray",
        ]
    ),
    st.lists(refs, max_size=3).map(lambda items: f"derived_from: {items!r}"),
    refs.map(lambda ref: f"derived_from: {ref!r}"),
)
body_lines = st.one_of(
    refs.map(lambda ref: f"- [entry]({ref})"),
    refs.map(lambda ref: f"The rules are defined in {ref or 'x.md'}."),
    refs.map(lambda ref: f"Limits are governed by [text]({ref or 'x.md'})."),
    st.sampled_from(["```", "## Section", "plain prose", "~~~"]),
    st.text(max_size=30),
)
documents = st.builds(
    lambda head, body, opened: (
        ("---\n" + "\n".join(head) + "\n---\n" if opened else "") + "\n".join(body) + "\n"
    ),
    st.lists(frontmatter_lines, max_size=6),
    st.lists(body_lines, max_size=6),
    st.booleans(),
)
banks = st.dictionaries(st.sampled_from(PATHS), documents, max_size=len(PATHS))


def snapshot_of(files: dict[str, str], with_dna: bool) -> Snapshot:
    texts = dict(files)
    if with_dna:
        texts["dna/governance.md"] = GOVERNANCE
    entries: dict[str, Any] = {
        path: Entry(parse_text(path, text), text) for path, text in sorted(texts.items())
    }
    return build_snapshot("/bank", "/bank", entries, 1)


@settings(deadline=None)
@given(banks, st.booleans())
def test_validate_never_raises_is_deterministic_and_sorted(
    files: dict[str, str], with_dna: bool
) -> None:
    first = snapshot_of(files, with_dna)
    second = snapshot_of(files, with_dna)
    found = findings(first)
    assert found == findings_uncached(second)
    keys = [(RULE_ORDER[item.rule], item.path, item.line or 0) for item in found]
    assert keys == sorted(keys)
    result = validate(first, scope="domain")
    assert result["total"] == len(result["findings"])


@settings(deadline=None)
@given(banks, st.booleans(), st.data())
def test_partial_and_incremental_validation_agree_after_a_random_change(
    files: dict[str, str], with_dna: bool, data: st.DataObject
) -> None:
    before = snapshot_of(files, with_dna)
    if not before.docs:
        return
    path = data.draw(st.sampled_from(sorted(before.docs)))
    change = data.draw(st.sampled_from(list(plans_for(before, path))))
    after = apply_virtually(before, change)
    touched = sorted(change)
    part = new_findings(findings_for(before, touched), findings_for(after, touched))
    full = new_findings(findings_uncached(before), findings_uncached(after))
    assert [identity(item) for item in part] == [identity(item) for item in full]
    assert findings(after) == findings_uncached(after)
