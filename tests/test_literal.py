"""Which document defines a literal (issue 16, second wave): a labelled list item, a header
about the literal's word pieces (`mbank/literal.py`)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_route import document, write

from mbank.literal import (
    DEFINING_LINE,
    LEAD_IN,
    TOPIC,
    _best_line,
    defining_shapes,
    definition_score,
    labelled_at,
    topic_share,
)
from mbank.search import SearchIndex, search
from mbank.snapshot import Bank

PATH = "tools/app/test/fixtures/"


def test_a_short_label_then_the_literal_is_a_defining_list_item(tmp_path: Path) -> None:
    write(tmp_path, "a.md", document("A", body=f"- committed test data: `{PATH}`\n"))
    write(tmp_path, "b.md", document("B", body=f"Fixtures are kept in `{PATH}` for now.\n"))
    write(
        tmp_path,
        "c.md",
        document("C", body=f"- this long sentence explains where the data lives: `{PATH}`\n"),
    )
    snapshot = Bank(tmp_path).refresh()
    index = SearchIndex()
    index.sync(snapshot)
    scores = {
        path: definition_score(snapshot.docs[path], index.bodies[path], PATH, 1)
        for path in ("a.md", "b.md")
    }
    assert scores["a.md"] - scores["b.md"] == DEFINING_LINE
    # a label is short: over forty characters before the colon it is a sentence, a mention
    assert definition_score(snapshot.docs["c.md"], index.bodies["c.md"], PATH, 1) == scores["b.md"]


def test_a_title_or_purpose_about_two_pieces_of_the_literal_puts_its_document_first(
    tmp_path: Path,
) -> None:
    # both list the path as a list item; the testing policy is about tests and fixtures
    write(
        tmp_path,
        "ops/stages.md",
        document("Stages", "Where the tool runs.", body=f"- `{PATH}` for smoke checks\n"),
    )
    write(
        tmp_path,
        "engineering/testing.md",
        document(
            "Testing Policy",
            "Coverage and fixture strategy.",
            body=f"- `{PATH}` holds the committed test data\n",
        ),
    )
    snapshot = Bank(tmp_path).refresh()
    assert topic_share(snapshot.docs["engineering/testing.md"], PATH) == 0.5
    assert topic_share(snapshot.docs["ops/stages.md"], PATH) == 0.0
    result = search(snapshot, SearchIndex(), PATH)
    assert [hit["path"] for hit in result["results"]] == ["engineering/testing.md", "ops/stages.md"]
    first, second = (hit["score"] for hit in result["results"])
    assert first - second == TOPIC * 0.5


def test_one_shared_piece_or_a_one_piece_literal_is_no_topic(tmp_path: Path) -> None:
    write(tmp_path, "a.md", document("Provider Adapters", "What each provider does."))
    doc = Bank(tmp_path).refresh().docs["a.md"]
    assert topic_share(doc, "src/providers/*") == 0.0
    assert topic_share(doc, "providers") == 0.0


def test_the_excerpt_is_the_labelled_line_not_an_earlier_mention(tmp_path: Path) -> None:
    body = f"Fixtures are kept in `{PATH}` for now.\n\n- committed test data: `{PATH}`\n"
    write(tmp_path, "a.md", document("A", body=body))
    result = search(Bank(tmp_path).refresh(), SearchIndex(), PATH)
    assert result["results"][0]["excerpt"] == f"- committed test data: `{PATH}`"


def _best_line_by_whole_body_search(body: str, literal: str) -> float:
    """`_best_line` as it was before it looked only at the lines holding the literal: each
    shape searched over the whole body as a multi-line pattern, then the label check over
    the non-overlapping occurrences (the reference the faster one must equal)."""
    row_or_item, heading, lead_in = (
        re.compile(f"^{shape}", re.M) for shape in defining_shapes(literal)
    )
    if row_or_item.search(body) or heading.search(body):
        return DEFINING_LINE
    at = body.find(literal)
    while at >= 0:
        if labelled_at(body, body.rfind("\n", 0, at) + 1, at):
            return DEFINING_LINE
        at = body.find(literal, at + len(literal))
    return LEAD_IN if lead_in.search(body) else 0.0


# bodies made of the pieces the three shapes are built from, so most draws hold the literal
# at a line start, after a list mark, a table bar, a heading, a label or decoration
_PIECES = ("\n", " ", "\t", "- ", "* ", "1. ", "2) ", "|", "## ", "# ", "`", "**", "'", "[")
_TAILS = (":", " —", "–", "=", "(", "-", " x", "]", "a:", "label: ", "aa", "a\n")


@settings(max_examples=400, deadline=None)
@given(
    literal=st.sampled_from(("a", "aa", "a:a", "ft-", "x.json", "a\na", "`a", "-a", "a b")),
    pieces=st.lists(
        st.one_of(
            st.sampled_from(_PIECES), st.sampled_from(_TAILS), st.text("ab: \n-", max_size=4)
        ),
        max_size=30,
    ),
    at=st.lists(st.integers(0, 30), max_size=4),
)
def test_best_line_equals_a_whole_body_search(
    literal: str, pieces: list[str], at: list[int]
) -> None:
    for position in sorted(at, reverse=True):
        pieces.insert(min(position, len(pieces)), literal)
    body = "".join(pieces)
    assert _best_line(body, literal) == _best_line_by_whole_body_search(body, literal)
