"""`bank_search` (spec 02 §4; acceptance 07 §3.7, properties 07 §4.4)."""

from __future__ import annotations

import decimal
import itertools
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_banks import copy_fixture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbank.search import (
    SEARCH_HINT,
    SearchIndex,
    body_counts,
    excerpt_of,
    round_half_up,
    search,
    search_tokens,
    token_parts,
)
from mbank.snapshot import Bank, Snapshot

EMPTY = {"results": [], "hint": SEARCH_HINT}


def open_bank(root: Path) -> tuple[Bank, Snapshot, SearchIndex]:
    bank = Bank(root)
    return bank, bank.refresh(), SearchIndex()


def paths(result: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in result["results"]]


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def document(title: str, body: str, *, status: str = "active", extra: str = "") -> str:
    return (
        f"---\ntitle: {title}\ndoc_kind: engineering\ndoc_function: canonical\n"
        f"purpose: Notes.\nstatus: {status}\n{extra}---\n# {title}\n\n{body}\n"
    )


# --------------------------------------------------------------------------------------------
# Tokens (§4.2)
# --------------------------------------------------------------------------------------------


def test_search_tokens_keep_identifiers_whole() -> None:
    assert search_tokens("See FT-SMD-843 and filter_thresholds.") == [
        "see",
        "ft-smd-843",
        "and",
        "filter_thresholds",
    ]
    assert search_tokens("_private- x") == ["private"]


def test_token_parts_split_identifiers_only() -> None:
    assert token_parts("ft-smd-843") == ["ft", "smd", "843"]
    assert token_parts("filter_thresholds") == ["filter", "thresholds"]
    assert token_parts("thresholds") == []
    assert token_parts("a-b_cd") == ["cd"]


def test_identifiers_are_indexed_whole_and_by_parts(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    index.sync(snapshot)
    assert "features/FT-001/brief.md" in index.postings["ft-001"]
    assert "features/FT-001/brief.md" in index.postings["ft"]
    assert "domain/rules.md" in index.postings["filter_thresholds"]
    assert "domain/rules.md" in index.postings["thresholds"]


# --------------------------------------------------------------------------------------------
# The facts of §4.6 on the fixture bank
# --------------------------------------------------------------------------------------------


def test_a_word_present_only_in_a_body_is_found(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    assert paths(search(snapshot, index, "stretched")) == ["broken/bad-yaml.md"]


def test_several_terms_narrow_to_the_only_document_holding_both(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    result = search(snapshot, index, "exponential backoff")
    assert paths(result) == ["broken/bad-yaml.md"]


def test_excerpt_and_line_point_at_the_matching_line(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    hit = search(snapshot, index, "exponential backoff")["results"][0]
    lines = (fixture_bank / "broken" / "bad-yaml.md").read_text(encoding="utf-8").split("\n")
    assert hit["excerpt"].startswith("Exponential.")
    assert lines[hit["line"] - 1].strip() == hit["excerpt"]
    assert hit["hits"] == 2


def test_documents_matching_every_concept_rank_before_partial_matches(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    found = paths(search(snapshot, index, "job scorer", limit=50))
    holds_both = [{"job", "scorer"} <= set(search_tokens(index.bodies[path])) for path in found]
    assert holds_both[:3] == [True, True, True]
    assert holds_both[3:] and not any(holds_both[3:]), "partial matches follow, still returned"


def test_partial_matches_follow_every_all_concept_match_even_with_higher_scores(
    tmp_path: Path,
) -> None:
    write(tmp_path, "a.md", document("A", "alpha " * 40))
    write(tmp_path, "b.md", document("B", "alpha beta"))
    write(tmp_path, "c.md", document("C", "beta " * 30))
    _bank, snapshot, index = open_bank(tmp_path)
    result = search(snapshot, index, "alpha beta")
    assert paths(result) == ["b.md", "a.md", "c.md"]
    assert result["results"][1]["score"] > result["results"][0]["score"]


def test_whole_token_outweighs_its_fragments(tmp_path: Path) -> None:
    write(tmp_path, "features/FT-042/brief.md", document("Brief", "FT-042 ships the gate."))
    registry = "\n".join(f"| FT-{n:03d} | feature |" for n in range(1, 71))
    write(tmp_path, "features/README.md", document("Features", registry))
    _bank, snapshot, index = open_bank(tmp_path)
    assert paths(search(snapshot, index, "FT-042"))[0] == "features/FT-042/brief.md"


def test_templates_and_inbox_notes_never_appear(fixture_bank: Path) -> None:
    write(fixture_bank, "_inbox/note.md", document("Note", "The placeholders are temporary."))
    _bank, snapshot, index = open_bank(fixture_bank)
    # "relies" occurs only in the feature-brief template; "temporary" only in the inbox note
    assert search(snapshot, index, "relies") == EMPTY
    assert search(snapshot, index, "temporary") == EMPTY
    assert "flows/templates/feature/brief.md" in index.postings["relies"]


def test_filters_apply_exactly(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    everything = paths(search(snapshot, index, "thresholds", limit=50))
    assert {"domain/rules.md", "features/FT-001/brief.md"} <= set(everything)
    assert paths(search(snapshot, index, "thresholds", kind="feature")) == [
        "features/FT-001/brief.md"
    ]
    assert paths(search(snapshot, index, "thresholds", layer="knowledge")) == ["domain/rules.md"]
    drafts = paths(search(snapshot, index, "job", status="draft", limit=50))
    assert drafts and all(snapshot.docs[path].status == "draft" for path in drafts)


def test_frontmatter_is_not_searchable(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    assert search(snapshot, index, "retry_policy") == EMPTY
    assert search(snapshot, index, "humans_and_agents") == EMPTY


def test_a_word_no_body_holds_finds_nothing(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    assert search(snapshot, index, "kubernetes") == EMPTY
    assert search(snapshot, index, "и") == EMPTY
    assert search(snapshot, index, "  ") == EMPTY


def test_stop_words_alone_are_searched_literally(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    assert search(snapshot, index, "the")["results"]


def test_limit_caps_the_results(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    assert len(search(snapshot, index, "job", limit=2)["results"]) == 2


def test_phrase_and_title_bonuses_add_to_the_count(tmp_path: Path) -> None:
    write(tmp_path, "a.md", document("Queue Depth", "the queue depth grows"))
    write(tmp_path, "b.md", document("Other", "depth of the queue"))
    _bank, snapshot, index = open_bank(tmp_path)
    scores = {
        hit["path"]: hit["score"] for hit in search(snapshot, index, "queue depth")["results"]
    }
    # issue 16: a phrase is a literal. a.md holds it (H1 and sentence): the literal tier, its
    # score the definition score, `hits` its two true occurrences; b.md holds only the words:
    # after it, labelled, scored by §4.4 (2 words x 10 / 10 = 2.0)
    hits = search(snapshot, index, "queue depth")["results"]
    assert [hit["path"] for hit in hits] == ["a.md", "b.md"]
    assert hits[0]["hits"] == 2 and "match" not in hits[0]
    assert hits[0]["excerpt"] == "# Queue Depth"
    assert "match" not in hits[1]  # a phrase's word matches are not labelled: only a literal's
    assert scores["b.md"] == 2.0


def test_archived_documents_are_damped(tmp_path: Path) -> None:
    write(tmp_path, "a.md", document("A", "gauge gauge", status="archived"))
    _bank, snapshot, index = open_bank(tmp_path)
    hit = search(snapshot, index, "gauge")["results"][0]
    # issue 16: a word the body holds ranks by its definition score, damped x 0.3 (was 0.6)
    from mbank.literal import definition_score

    undamped = definition_score(snapshot.docs["a.md"], index.bodies["a.md"], "gauge", 2)
    assert hit["score"] == round_half_up(undamped * 0.3, 1)
    assert hit["hits"] == 2


def test_translation_tier_finds_english_documents_for_a_russian_word(tmp_path: Path) -> None:
    write(tmp_path, "domain/model.md", document("Model", "The model has two formats."))
    write(tmp_path, "domain/other.md", document("Other", "Nothing relevant."))
    _bank, snapshot, index = open_bank(tmp_path)
    assert paths(search(snapshot, index, "модель")) == paths(search(snapshot, index, "model"))
    hit = search(snapshot, index, "модель")["results"][0]
    # issue 16: the body holds the translation "model" as a whole word, so the document is in
    # the literal tier, ranked by the definition score of "model" x 0.9
    from mbank.literal import definition_score

    body = index.bodies["domain/model.md"]
    expected = definition_score(snapshot.docs["domain/model.md"], body, "model", 2) * 0.9
    assert hit["score"] == round_half_up(expected, 1)
    assert hit["excerpt"] == "# Model"


def test_scores_are_rounded_half_up_to_one_decimal(tmp_path: Path) -> None:
    # the word tier: "модель" reaches "modeling" through the prefix of its translation
    # (weight 6): 25 x 6 / 10 = 15.0 on an archived document -> 4.5; 5 x 6 / 10 = 3.0 -> 0.9
    write(tmp_path, "a.md", document("A", "modeling " * 25, status="archived"))
    write(tmp_path, "b.md", document("B", "modeling " * 5, status="archived"))
    _bank, snapshot, index = open_bank(tmp_path)
    scores = [hit["score"] for hit in search(snapshot, index, "модель")["results"]]
    assert scores == [4.5, 0.9]
    # the literal tier rounds the same way
    for hit in search(snapshot, index, "modeling")["results"]:
        assert hit["score"] == round_half_up(hit["score"], 1)
    assert round_half_up(0.25, 1) == 0.3
    assert round(0.25, 1) == 0.2  # what banker's rounding would have shown


# --------------------------------------------------------------------------------------------
# The index and its incremental sync (§4.3)
# --------------------------------------------------------------------------------------------


def test_sync_counts_documents_touched(fixture_bank: Path) -> None:
    bank, snapshot, index = open_bank(fixture_bank)
    assert index.sync(snapshot) == 17
    assert index.sync(snapshot) == 0
    assert index.sync(bank.refresh()) == 0
    rules = fixture_bank / "domain" / "rules.md"
    rules.write_text(rules.read_text(encoding="utf-8") + "\nA zeppelin line.\n", encoding="utf-8")
    assert index.sync(bank.refresh()) == 1
    assert "domain/rules.md" in index.postings["zeppelin"]


def test_sync_drops_vanished_documents_and_their_terms(fixture_bank: Path) -> None:
    bank, snapshot, index = open_bank(fixture_bank)
    index.sync(snapshot)
    (fixture_bank / "orphan.md").unlink()
    assert index.sync(bank.refresh()) == 1
    assert "orphan.md" not in index.indexed
    assert "fifty" not in index.postings  # only the orphan said "Fifty"


def test_an_incrementally_synced_index_equals_a_fresh_one(fixture_bank: Path) -> None:
    bank, snapshot, index = open_bank(fixture_bank)
    index.sync(snapshot)
    write(fixture_bank, "engineering/new.md", document("New", "gamma ray burst"))
    (fixture_bank / "conflict.md").unlink()
    snapshot = bank.refresh()
    index.sync(snapshot)
    fresh = SearchIndex()
    fresh.sync(snapshot)
    assert index.postings == fresh.postings
    assert index.bodies == fresh.bodies
    assert index.indexed == fresh.indexed


def test_the_fixture_index_holds_more_than_a_hundred_terms(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    index.sync(snapshot)
    assert index.term_count() > 100


def test_tokens_with_prefix_are_sorted_and_need_three_letters(fixture_bank: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_bank)
    index.sync(snapshot)
    found = index.tokens_with_prefix("thresh")
    assert found == sorted(found) and "thresholds" in found
    assert index.tokens_with_prefix("th") == []


def test_search_reads_never_write(fixture_bank: Path, assert_unchanged: Any) -> None:
    with assert_unchanged(fixture_bank):
        _bank, snapshot, index = open_bank(fixture_bank)
        search(snapshot, index, "thresholds")


# --------------------------------------------------------------------------------------------
# Excerpts (§4.5)
# --------------------------------------------------------------------------------------------


def test_excerpt_prefers_the_first_line_with_the_most_terms_and_damps_headings() -> None:
    text = "---\ntitle: X\n---\n# alpha beta\n\nalpha\nalpha beta\n\nalpha beta gamma\n"
    assert excerpt_of(text, 3, ["alpha", "beta"]) == ("alpha beta", 7)
    assert excerpt_of(text, 3, ["zeta"]) == ("", 0)


def test_excerpt_is_cut_at_240_characters() -> None:
    text = "word " * 100
    excerpt, line = excerpt_of(text, 0, ["word"])
    assert line == 1 and len(excerpt) == 240 and excerpt.endswith("...")


# --------------------------------------------------------------------------------------------
# Snapshot of the results on the fixture bank
# --------------------------------------------------------------------------------------------

QUERIES = [
    "exponential backoff",
    "FT-001",
    "пороги",
    "thresholds scoring",
    "queue",
    "filter_thresholds",
    "retry_policy",
]


def test_search_results_on_the_fixture_bank(fixture_plus: Path, snapshot: Any) -> None:
    _bank, bank_snapshot, index = open_bank(fixture_plus)
    results = {query: search(bank_snapshot, index, query) for query in QUERIES}
    assert results == snapshot


# --------------------------------------------------------------------------------------------
# Properties (07 §4.4)
# --------------------------------------------------------------------------------------------

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
PROPERTY = settings(
    max_examples=5_000 if PROFILE == "fuzz" else 200,
    derandomize=PROFILE != "fuzz",
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

QUERY_TEXT = st.one_of(
    st.text(),
    st.text(alphabet="абвгдеёжзийклмнопрстуфхцчшщъыьэюя -_", max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=60),
    st.sampled_from(["thresholds", "FT-001", "пороги", "\x00\x1b[31m", "🦊 queue", "x" * 5000]),
)


@pytest.fixture(scope="module")
def shared_bank(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, SearchIndex]:
    root = copy_fixture(tmp_path_factory.mktemp("property") / "bank", overlay=True)
    write(root, "_inbox/note.md", document("Note", "A thresholds note in quarantine."))
    return Bank(root).refresh(), SearchIndex()


@PROPERTY
@given(query=QUERY_TEXT, limit=st.integers(min_value=1, max_value=50))
def test_search_never_raises_and_returns_well_formed_hits(
    shared_bank: tuple[Snapshot, SearchIndex], query: str, limit: int
) -> None:
    snapshot, index = shared_bank
    result = search(snapshot, index, query, limit=limit)
    hits = result["results"]
    assert len(hits) <= limit
    if not hits:
        assert result == EMPTY
    keys = [(-hit["score"], hit["path"]) for hit in hits]
    # all-concept matches first, then partial ones: at most two runs, each sorted
    breaks = sum(1 for a, b in itertools.pairwise(keys) if a > b)
    assert breaks <= 1
    for hit in hits:
        assert math.isfinite(hit["score"])
        doc = snapshot.docs[hit["path"]]
        assert doc.doc_function != "template" and doc.layer != "inbox"


@PROPERTY
@given(
    value=st.one_of(
        st.floats(min_value=0, max_value=1e6, allow_nan=False),
        st.integers(min_value=0, max_value=10**6).map(lambda n: n / 1000),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    digits=st.integers(min_value=0, max_value=4),
)
def test_half_up_rounding_equals_decimal_round_half_up(value: float, digits: int) -> None:
    context = decimal.Context(prec=1_000, Emax=10**6, Emin=-(10**6))
    expected = decimal.Decimal(value).quantize(
        decimal.Decimal(1).scaleb(-digits, context), decimal.ROUND_HALF_UP, context
    )
    assert round_half_up(value, digits) == float(expected)


def test_half_up_rounding_of_exact_ties() -> None:
    assert round_half_up(0.125, 2) == 0.13
    assert round_half_up(2.5, 0) == 3.0
    assert round_half_up(18.0, 2) == 18.0
    assert round_half_up(0.49999999999999994, 0) == 0.0


def test_results_are_identical_across_two_indexes(fixture_plus: Path, tmp_path: Path) -> None:
    other = tmp_path / "copy"
    shutil.copytree(fixture_plus, other)
    _b1, first, index_one = open_bank(fixture_plus)
    _b2, second, index_two = open_bank(other)
    for query in QUERIES:
        assert search(first, index_one, query) == search(second, index_two, query)


# --------------------------------------------------------------------------------------------
# The fast paths equal a plain transcription of §4.4 and §4.5
# --------------------------------------------------------------------------------------------


def reference_search(
    snapshot: Snapshot, index: SearchIndex, query: str, limit: int = 10, **filters: str
) -> dict[str, Any]:
    """§4.4-§4.5 written out literally: every candidate scored, rounded and sorted."""
    from mbank.lang import expand_terms, tables_for
    from mbank.literal import definition_score, is_exact, is_literal, literal_excerpt
    from mbank.search import SEARCH_STOP

    index.sync(snapshot)
    everything = search_tokens(query)
    if not everything:
        return EMPTY
    primary = [t for t in everything if t not in SEARCH_STOP] or everything
    phrase = query.strip().lower()
    weighted: list[tuple[str, int]] = []
    concepts: list[list[str]] = []
    translated: list[str] = []
    for term in expand_terms(primary, tables_for(snapshot.vocabulary)):
        variants = [term.literal]
        weighted.append((term.literal, 10))
        for t in term.translations:
            forms = [t] if t in index.postings else index.tokens_with_prefix(t)
            for form in forms:
                weighted.append((form, 6))
                variants.append(form)
                translated.append(form)
        if term.stem is not None:
            for token in index.tokens_with_prefix(term.stem):
                if token != term.literal:
                    weighted.append((token, 6))
                    variants.append(token)
        if term.literal not in index.postings:
            for part in token_parts(term.literal):
                weighted.append((part, 1))
                variants.append(part)
        concepts.append(variants)
    counts: dict[str, int] = {}
    for token, weight in weighted:
        for path, n in index.postings.get(token, {}).items():
            counts[path] = counts.get(path, 0) + n * weight
    everyone = [{p for v in variants for p in index.postings.get(v, {})} for variants in concepts]
    # issue 16: the query as written (a plain word as a whole word, a literal or phrase as a
    # substring) first: every document whose body holds it, by definition score; then the
    # other matches (labelled as word pieces after a literal)
    literal_rows = []
    plain_word = not is_exact(phrase) and phrase not in SEARCH_STOP
    forms = [(phrase, 1.0)]
    single = expand_terms(primary, tables_for(snapshot.vocabulary)) if len(primary) == 1 else []
    if plain_word and single and single[0].stem is not None:
        forms += [(t, 0.9) for t in single[0].translations if t != phrase and t in index.postings]
    if is_exact(phrase) or plain_word:
        for path, body in index.bodies.items():
            doc = snapshot.docs[path]
            if doc.doc_function == "template" or doc.layer == "inbox":
                continue
            if any(getattr(doc, field) != value for field, value in filters.items()):
                continue
            best = None
            for form, discount in forms:
                # a plain word counts as a whole token (its parts of identifiers included)
                n = body_counts(body)[form] if plain_word else body.count(form)
                if n:
                    value = definition_score(doc, body, form, n) * discount
                    if best is None or value > best[0]:
                        best = (value, n, form)
                    if form == phrase:
                        break  # the word as typed wins when the body holds it
            if best is None:
                continue
            value = best[0] * (0.3 if doc.status == "archived" else 1)
            literal_rows.append((-round_half_up(value, 1), path, best[1], best[2]))
    literal_rows.sort()
    held = {row[1] for row in literal_rows}
    rows = []
    for path, count in counts.items():
        doc = snapshot.docs[path]
        if doc.doc_function == "template" or doc.layer == "inbox" or path in held:
            continue
        if any(getattr(doc, field) != value for field, value in filters.items()):
            continue
        score = count / 10
        if " " in phrase and phrase in index.bodies[path]:
            score += 25
        for text, whole in ((doc.title.lower(), 15), (doc.purpose.lower(), 10)):
            if phrase in text:
                score += whole
            elif any(form in text for form in translated):
                score += whole * 0.6
        if doc.status == "archived":
            score *= 0.3
        group = 0 if all(path in holders for holders in everyone) else 1
        rows.append((group, -round_half_up(score, 1), path, count))
    rows.sort()
    if not (literal_rows + rows)[:limit]:
        return EMPTY
    terms = list(dict.fromkeys(t.lower() for t in (*primary, *translated)))
    results = []
    for negative, path, n, form in literal_rows[:limit]:
        doc = snapshot.docs[path]
        excerpt, number = literal_excerpt(
            snapshot.raw[path].split("\n"), doc.body_offset, index.bodies[path], form
        )
        results.append(
            {
                "path": path,
                "title": doc.title,
                "docKind": doc.doc_kind,
                "layer": doc.layer,
                "status": doc.status,
                "score": -negative,
                "excerpt": excerpt,
                "line": number,
                "hits": n,
            }
        )
    for _group, negative, path, count in rows[: max(limit - len(literal_rows), 0)]:
        doc = snapshot.docs[path]
        lines = snapshot.raw[path].split("\n")
        best, best_line, number = 0.0, "", 0
        for i in range(doc.body_offset, len(lines)):
            if not lines[i].strip():
                continue
            value: float = sum(1 for t in terms if t in lines[i].lower())
            if lines[i].lstrip().startswith("#"):
                value *= 0.9
            if value > best:
                best, best_line, number = value, lines[i].strip(), i + 1
        if len(best_line) > 240:
            best_line = best_line[:237] + "..."
        results.append(
            {
                "path": path,
                "title": doc.title,
                "docKind": doc.doc_kind,
                "layer": doc.layer,
                "status": doc.status,
                "score": -negative,
                "excerpt": best_line,
                "line": number,
                "hits": int(round_half_up(count / 10, 0)),
                **({"match": "word-pieces"} if is_literal(phrase) else {}),
            }
        )
    return {"results": results}


def sample_queries(snapshot: Snapshot, index: SearchIndex, count: int) -> list[str]:
    """Deterministic queries from the bank's own text: words, identifiers, phrases."""
    import random

    index.sync(snapshot)
    rng = random.Random(20260914)
    tokens = index.sorted_tokens()
    queries = ["пороги фильтрации", "модель", "ft-001", "queue tenant", "the", "a b"]
    paths = sorted(snapshot.raw)
    while len(queries) < count:
        kind = len(queries) % 4
        if kind == 0:
            queries.append(rng.choice(tokens))
        elif kind == 1:
            queries.append(" ".join(rng.sample(tokens, 2)))
        else:
            words = snapshot.raw[rng.choice(paths)].split()
            if len(words) > 3:
                at = rng.randrange(len(words) - 2)
                queries.append(" ".join(words[at : at + (2 if kind == 2 else 3)]))
    return queries


def test_search_equals_the_plain_transcription_on_the_fixture(fixture_plus: Path) -> None:
    _bank, snapshot, index = open_bank(fixture_plus)
    for query in sample_queries(snapshot, index, 150):
        for limit in (1, 3, 50):
            assert search(snapshot, index, query, limit=limit) == reference_search(
                snapshot, index, query, limit
            ), query
    for query in ("job", "queue scorer", "thresholds"):
        assert search(snapshot, index, query, status="draft") == reference_search(
            snapshot, index, query, 10, status="draft"
        )
        assert search(snapshot, index, query, layer="knowledge") == reference_search(
            snapshot, index, query, 10, layer="knowledge"
        )
        assert search(snapshot, index, query, kind="adr") == reference_search(
            snapshot, index, query, 10, doc_kind="adr"
        )


@pytest.mark.corpus
def test_search_equals_the_plain_transcription_on_real_banks(corpus: dict[str, Path]) -> None:
    for root in corpus.values():
        _bank, snapshot, index = open_bank(root)
        for query in sample_queries(snapshot, index, 120):
            assert search(snapshot, index, query) == reference_search(snapshot, index, query)


# --------------------------------------------------------------------------------------------
# The command line (04 §9.2-9.4)
# --------------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from mbank.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_search_prints_people_output(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str], snapshot: Any
) -> None:
    import re

    outputs = {}
    for query in ("exponential backoff", "thresholds scoring", "kubernetes", "FT-001"):
        code, out, err = run_cli(capsys, "--root", str(fixture_plus), "search", query)
        assert code == 0
        # the timing line goes to stderr (issue 15); stdout is the hits alone
        first, _, rest = err.rstrip("\n"), "", out
        assert re.fullmatch(r"indexed 25 documents, \d+ terms, \d+\.\d ms", first), first
        outputs[query] = re.sub(r", \d+\.\d ms$", ", <MS> ms", first) + "\n" + rest
    assert outputs["kubernetes"].endswith("\n(no matches)\n")
    assert outputs == snapshot


def test_cli_search_json_is_the_tool_result(
    fixture_plus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    code, out, _err = run_cli(
        capsys, "--root", str(fixture_plus), "search", "thresholds", "--json", "--status", "active"
    )
    _bank, snapshot, index = open_bank(fixture_plus)
    assert code == 0
    assert json.loads(out) == search(snapshot, index, "thresholds", status="active")


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "x"],
        ["search", "queue", "--limit", "0"],
        ["search", "queue", "--limit", "51"],
        ["search", "queue", "--layer", "inbox"],
    ],
)
def test_cli_search_bounds_are_usage_errors(
    fixture_bank: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_cli(capsys, "--root", str(fixture_bank), *argv)
    assert code == 2 and out == "" and "usage:" in err


# --------------------------------------------------------------------------------------------
# Literals (issue 16): true occurrences, the defining document first, word pieces after
# --------------------------------------------------------------------------------------------


def test_a_punctuated_query_is_a_literal_with_true_counts_and_excerpts(tmp_path: Path) -> None:
    write(
        tmp_path,
        "ops/config.md",
        document("Config", "| Key | Meaning |\n|---|---|\n| `instances.json` | the list |\n"),
    )
    mentions = "\n".join(f"Reload instances.json step {n}." for n in range(3))
    write(tmp_path, "features/FT-007/brief.md", document("Brief", mentions + "\n"))
    write(tmp_path, "features/FT-008/brief.md", document("Other", "instances and json apart.\n"))
    _bank, snapshot, index = open_bank(tmp_path)
    hits = search(snapshot, index, "instances.json")["results"]
    # the table row that defines it beats the feature that says it three times
    assert [hit["path"] for hit in hits] == [
        "ops/config.md",
        "features/FT-007/brief.md",
        "features/FT-008/brief.md",
    ]
    assert [hit["hits"] for hit in hits[:2]] == [1, 3]
    assert "instances.json" in hits[0]["excerpt"] and "instances.json" in hits[1]["excerpt"]
    assert "match" not in hits[0] and "match" not in hits[1]
    assert hits[2]["match"] == "word-pieces"


def test_a_prefix_literal_cites_a_line_that_holds_it(tmp_path: Path) -> None:
    write(tmp_path, "flows/feature.md", document("Flow", "- `FT-` numbers name packages.\n"))
    write(tmp_path, "features/README.md", document("Features", "The ft registry lists them.\n"))
    _bank, snapshot, index = open_bank(tmp_path)
    hits = search(snapshot, index, "FT-")["results"]
    assert hits[0]["path"] == "flows/feature.md"
    assert hits[0]["excerpt"] == "- `FT-` numbers name packages."
    assert all("ft-" in hit["excerpt"].lower() for hit in hits if "match" not in hit)


def test_a_long_line_is_cut_around_the_literal(tmp_path: Path) -> None:
    line = "word " * 100 + "the --no-detect flag " + "tail " * 60
    write(tmp_path, "ops/cli.md", document("CLI", line + "\n"))
    _bank, snapshot, index = open_bank(tmp_path)
    (hit,) = search(snapshot, index, "--no-detect")["results"]
    assert "--no-detect" in hit["excerpt"] and len(hit["excerpt"]) <= 240
    assert hit["excerpt"].startswith("...") and hit["excerpt"].endswith("...")


def test_the_cli_searches_a_query_that_starts_with_a_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "ops/cli.md", document("CLI", "Pass `--no-detect` to skip it.\n"))
    code, out, err = run_cli(
        capsys, "--root", str(tmp_path), "search", "--limit", "3", "--", "--no-detect"
    )
    assert code == 0 and err.startswith("indexed 1 documents")  # the timing line, on stderr
    assert "ops/cli.md" in out and "Pass `--no-detect` to skip it." in out
