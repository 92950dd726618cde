"""The fast section scanner agrees with markdown-it-py, the parser of record (spec 01 §5.1,
07 §3.27): same sections, first H1, fenced regions and therefore the same links, on the
fixture banks, on generated bodies, on bench-generated banks and (opt-in) on the corpora."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixture_banks import FIXTURE_BANK, FIXTURE_OVERLAY
from hypothesis import given
from hypothesis import strategies as st

from mbank.parse import (
    BodyStructure,
    _scan_simple,
    extract_links,
    scan_body,
    scan_with_markdown_it,
    split_frontmatter,
)


def _lines(body: str) -> list[str]:
    return [line.removesuffix("\r") for line in body.split("\n")]


def assert_scanner_agrees(text: str, path: str = "doc.md") -> BodyStructure:
    """Sections, first H1, fences and links: the hot path equals markdown-it on `text`."""
    split = split_frontmatter(text)
    fast = scan_body(split.body)
    record = scan_with_markdown_it(split.body)
    assert fast == record
    fast_links = extract_links(path, text, fast.fences, split.body_offset)
    record_links = extract_links(path, text, record.fences, split.body_offset)
    assert fast_links == record_links
    return fast


def _text_documents(*roots: Path) -> list[Path]:
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue  # a non-text document has no body to scan (spec 01 §6.4)
            found.append(path)
    return found


FIXTURE_DOCUMENTS = _text_documents(FIXTURE_BANK, FIXTURE_OVERLAY)


@pytest.mark.parametrize(
    "path", FIXTURE_DOCUMENTS, ids=lambda p: p.relative_to(FIXTURE_BANK.parent).as_posix()
)
def test_scanner_equals_markdown_it_on_every_fixture_document(path: Path) -> None:
    assert_scanner_agrees(path.read_text(encoding="utf-8"), path.name)


def test_fixture_documents_take_the_fast_path() -> None:
    # Without this the agreement above could be vacuous (every body handed to markdown-it).
    simple = [
        path
        for path in FIXTURE_DOCUMENTS
        if _scan_simple(_lines(split_frontmatter(path.read_text(encoding="utf-8")).body))
        is not None
    ]
    assert len(simple) == len(FIXTURE_DOCUMENTS)


# Bodies on which the scanner once disagreed with markdown-it; each is fixed and kept.
REGRESSIONS = {
    # An unclosed fence runs to the last line markdown-it counts: not the empty remainder
    # after a final newline, nor a final line of only spaces.
    "unclosed-fence-final-newline": "~~~\n",
    "unclosed-fence-backticks": "```\n",
    "unclosed-fence-after-text": "x\n~~~\na\n\n",
    "unclosed-fence-trailing-blank-line": "~~~\n  ",
    "unclosed-fence-crlf": "~~~\r\na\r\n\r\n",
    # A tab after ">" opens a fence inside the blockquote.
    "fence-in-blockquote-after-tab": ">\t~~~\n",
    # A list item inside a blockquote holding a fence.
    "fence-in-list-in-blockquote": "# alpha\n>- ~~~\n",
    # A tab after a list marker, then a fence.
    "fence-in-list-after-tab": "- \t```\n",
}


@pytest.mark.parametrize("body", list(REGRESSIONS.values()), ids=list(REGRESSIONS))
def test_scanner_regressions_agree_with_markdown_it(body: str) -> None:
    assert_scanner_agrees(body)


HAND_CASES = {
    "closing-hashes": "## Decisions ##\n# Title #\n",
    "indented-heading": "   ## Indented\n    ## code, not a heading\n",
    "four-backtick-fence-holds-three": "````\n```\n## inside\n```\n````\n## after\n",
    "tilde-fence-closed-by-longer": "~~~\n## in\n~~~~~\n## out\n",
    "backtick-info-with-backtick-is-not-a-fence": "``` a`b\n## heading\n",
    "closing-fence-with-info-does-not-close": "```\n``` x\n## in\n```\n## out\n",
    "fence-in-list": "- item\n\n  ```\n  ## in\n  ```\n## out\n",
    "heading-in-list": "- ## not a section\n1. ## nor this\n",
    "heading-in-blockquote": "> ## quoted\n## real\n",
    "setext-is-not-a-section": "Title\n---\nOther\n===\n## real\n",
    "html-block": "<div>\n## inside html\n</div>\n\n## after\n",
    "one-line-comment": "<!-- note -->\n## after\n",
    "tabs": "##\tTabbed title\t\n\t## code\n",
    "crlf": "# H\r\n## A\r\n```\r\n## in\r\n```\r\n## B\r\n",
    "lone-cr": "# H\r## A\r```\r## in\r```\r## B\r",
    "empty-headings": "#\n##\n## #\n",
    "unclosed-fence-at-end": "## A\n```\n## in\n",
    "fence-inside-nested-list": "- a\n    - ```\n      ## in\n      ```\n## out\n",
}


@pytest.mark.parametrize("body", list(HAND_CASES.values()), ids=list(HAND_CASES))
def test_scanner_agrees_on_hand_written_corner_cases(body: str) -> None:
    assert_scanner_agrees(body)


# -- generated bodies -------------------------------------------------------------------------

INDENTS = st.sampled_from(["", " ", "  ", "   ", "    ", "\t", " \t", "      ", "        "])
WORDS = st.sampled_from(
    [
        *("alpha", "Beta gamma", "x", "`code`", "# not", "##", "a ## b", "`", "~~~", "```"),
        *("<b>", "*em*", "[link](x.md)", "Пороги", ""),
    ]
)
HEADINGS = st.builds(
    lambda indent, marks, text, close: f"{indent}{marks} {text}{close}",
    INDENTS,
    st.sampled_from(["#", "##", "###", "#######"]),
    WORDS,
    st.sampled_from(["", " ##", " #", "##", " ## ", " \\##", " #  #"]),
)
BARE_HEADINGS = st.sampled_from(
    ["#", "##", "## ", "##\t", "#\tTab", "##\tTab title", "##Nospace", "## ##", "\\## esc"]
)
FENCES = st.builds(
    lambda indent, char, length, info: f"{indent}{char * length}{info}",
    INDENTS,
    st.sampled_from(["`", "~"]),
    st.integers(2, 6),
    st.sampled_from(["", "python", " yaml ", "a`b", "~", " ```", "`"]),
)
LIST_ITEMS = st.builds(
    lambda indent, marker, rest: f"{indent}{marker}{rest}",
    INDENTS,
    st.sampled_from(["- ", "* ", "+ ", "1. ", "2) ", "-", "10. ", "-\t", "- - "]),
    st.one_of(WORDS, HEADINGS, FENCES, BARE_HEADINGS),
)
QUOTES = st.builds(
    lambda indent, marker, rest: f"{indent}{marker}{rest}",
    INDENTS,
    st.sampled_from([">", "> ", ">>", "> > ", ">\t"]),
    st.one_of(WORDS, HEADINGS, FENCES, LIST_ITEMS),
)
HTML = st.sampled_from(
    [
        *("<div>", "</div>", "<!-- c -->", "<!--", "-->", "<script>", "</script>", "<pre>"),
        *("</pre>", "<br/>", "<?php", "?>", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<x"),
    ]
)
UNDERLINES = st.sampled_from(
    ["---", "===", "  ---", "   ===", "- - -", "***", "___", "-", "=", "----  ", "    ---", "\t---"]
)
OTHER = st.sampled_from(
    [
        *("", "", "text line", "| a | b |", "|---|---|", "    indented code", "[ref]: /url"),
        *("  ", "\t", "1.", "*", "foo\\", "Setext title", "[x](notes.md)"),
    ]
)
LINES = st.one_of(
    HEADINGS, BARE_HEADINGS, FENCES, LIST_ITEMS, QUOTES, HTML, UNDERLINES, OTHER, WORDS
)
LINE_ENDS = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@st.composite
def markdown_bodies(draw: st.DrawFn) -> str:
    """Bodies built from the line shapes that decide headings and fences (spec 01 §5.1)."""
    body = ""
    for line in draw(st.lists(LINES, max_size=25)):
        body += line + draw(LINE_ENDS)
    if body and draw(st.booleans()):
        body = body[:-1]  # no final newline
    return body


@given(markdown_bodies())
def test_scanner_equals_markdown_it_on_generated_bodies(body: str) -> None:
    assert_scanner_agrees(body)


CHARACTER_SOUP = st.lists(
    st.sampled_from(list(" \t#`~>-*=<1.a\n\n\n\r+)_|![]()x"))
    | st.sampled_from(["```", "~~~", "## ", "# ", "- ", "> ", "\n\n", "<!--", "-->", "1. "])
    | st.just("    "),
    max_size=60,
).map("".join)


@given(CHARACTER_SOUP)
def test_scanner_equals_markdown_it_on_character_soup(body: str) -> None:
    assert_scanner_agrees(body)


@given(st.lists(st.sampled_from(["## A", "# T", "```", "~~~~", "text", "", "- x", "  ```"])))
def test_generated_documents_with_frontmatter_agree(lines: list[str]) -> None:
    # Section lines are file lines: the frontmatter offset must not change the agreement.
    assert_scanner_agrees("---\ntitle: T\n---\n" + "\n".join(lines))


# -- bench-generated banks --------------------------------------------------------------------


def test_scanner_equals_markdown_it_on_a_bench_generated_bank(tmp_path: Path) -> None:
    # bench/ is not installed; plain `pytest` does not put the repository root on sys.path.
    repo = str(FIXTURE_BANK.parent.parent)
    if repo not in sys.path:
        sys.path.insert(0, repo)
    try:
        from bench.generate import generate
    except ImportError:
        pytest.skip("bench.generate is not there yet: no generated bank to compare on")

    out = tmp_path / "bank368"
    generate(368, 20260914, out)
    documents = sorted(out.rglob("*.md"))
    assert len(documents) == 368
    for path in documents:
        assert_scanner_agrees(path.read_text(encoding="utf-8"), path.name)


# -- the corpora (opt-in) ---------------------------------------------------------------------


@pytest.mark.corpus
def test_scanner_equals_markdown_it_on_every_corpus_document(corpus: dict[str, Path]) -> None:
    compared = 0
    for root in corpus.values():
        for path in _text_documents(root):
            if any(part.startswith(".") for part in path.relative_to(root).parts):
                continue
            assert_scanner_agrees(path.read_text(encoding="utf-8"), path.name)
            compared += 1
    assert compared > 0
