"""Routing quality on the held-out question sets: `python -m bench.route_quality`.

Spec 02 §3.9 sets the acceptance for `bank_route`: on held-out questions written for real
banks, hit@3 ≥ 0.85 and hit@1 ≥ 0.65. This module measures that and asserts nothing. Each
set in `tests/route_quality/` names a bank folder under `--corpora`. For each set the module
builds the bank's snapshot once, asks both rankers every question with `limit=5`, prints a
Markdown table per corpus and per language, and writes JSON to
`bench/results/route-quality-<timestamp>.json`. The two rankers are the header-only score
(§3.3–§3.7, `route_header_only`) and the final ranking (§3.9, `route`).

Metrics. Questions with an answer: hit@k is the share whose first gold document ranks at
most k, and MRR is the mean of 1/rank (0 when no gold document is among the 5 results).
Questions without an answer: the share answered with an empty result list. `falseEmpty`
counts answerable questions that got an empty list, which shows whether the no-answer rules
fire too often. Issue 16's `answered` flag: `noAnswerFalse` is the share of unanswerable
questions the final ranker answers `answered: false` (or with an empty list), `falseAlarm`
the share of answerable ones it does that to. Latency is the median of the ranker calls
alone: the snapshot and the index are built once per bank, as in a long-running server.

`--sets DIR` reads the question sets from another folder (default `tests/route_quality`, the
development set); `--sets tests/route_quality_test` scores the held-out test set, which nobody
tunes against (see its README). The output format is the same for either folder.

`--verbose` also prints every question whose gold is not ranked first, with its rank, gold
and top 3. Without it only the aggregates are shown, so the aggregates can be compared
between commits without reading the held-out questions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from mbank.search import SearchIndex
    from mbank.snapshot import Snapshot

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "tests" / "route_quality"
DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
RESULTS = REPO / "bench" / "results"
LIMIT = 5
LANGUAGES = ("ru", "en", "all")
ALL_CORPORA = "ALL"


class Answer(msgspec.Struct, frozen=True):
    """What a ranker that can say "nothing answers this" returned: paths and its verdict."""

    paths: tuple[str, ...]
    answered: bool


Router = Callable[[str], "Sequence[str] | Answer"]
RouterFactory = Callable[[Any], Mapping[str, Router]]


class Question(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One held-out question and the documents that answer it (empty: no answer)."""

    id: str
    lang: str
    question: str
    gold: tuple[str, ...]
    gold_title: tuple[str, ...]
    gold_purpose: tuple[str, ...]
    note: str


class QuestionSet(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The questions written for one bank, named by its folder under the corpora."""

    bank: str
    questions: tuple[Question, ...]


class Outcome(msgspec.Struct, frozen=True):
    """What one ranker returned for one question, and how long the call took."""

    question: Question
    returned: tuple[str, ...]
    seconds: float
    # the ranker's `answered` verdict (issue 16); a ranker without one answers when it lists
    answered: bool | None = None

    @property
    def says_answered(self) -> bool:
        """Whether the ranker claims the bank answers: its verdict, else a non-empty list."""
        return bool(self.returned) if self.answered is None else self.answered

    @property
    def answerable(self) -> bool:
        """Whether the bank answers the question (it has gold documents)."""
        return bool(self.question.gold)

    @property
    def rank(self) -> int:
        """1-based position of the first gold document among the results; 0 when absent."""
        gold = set(self.question.gold)
        for position, path in enumerate(self.returned, start=1):
            if path in gold:
                return position
        return 0


def load_set(path: Path) -> QuestionSet:
    """Read one question-set file, rejecting unknown or missing fields."""
    return msgspec.json.decode(path.read_bytes(), type=QuestionSet)


def load_sets(directory: Path = SETS) -> list[QuestionSet]:
    """Every question set in `directory`, in file-name order."""
    return [load_set(path) for path in sorted(directory.glob("*.json"))]


def result_paths(result: Mapping[str, Any]) -> tuple[str, ...]:
    """The ranked paths of a route result (`{"results": [{"path": …}, …]}`)."""
    return tuple(str(entry["path"]) for entry in result.get("results", ()))


def build_index(snapshot: Snapshot) -> SearchIndex:
    """The search index `route` reads, synced to `snapshot` (02 §4.3)."""
    from mbank.search import SearchIndex

    index = SearchIndex()
    index.sync(snapshot)
    return index


def routers_for(snapshot: Snapshot) -> dict[str, Router]:
    """The two rankers under test, bound to one snapshot: `header` (§3.4) and `final` (§3.9)."""
    from mbank.route import route, route_header_only

    index = build_index(snapshot)

    def header(question: str) -> tuple[str, ...]:
        return result_paths(route_header_only(snapshot, question, limit=LIMIT))

    def final(question: str) -> Answer:
        result = route(snapshot, index, question, limit=LIMIT)
        return Answer(result_paths(result), bool(result.get("answered", result["results"])))

    return {"header": header, "final": final}


def ask(questions: Iterable[Question], router: Router) -> list[Outcome]:
    """Put every question to `router` and keep what it returned, timed."""
    outcomes: list[Outcome] = []
    for question in questions:
        started = time.perf_counter()
        got = router(question.question)
        seconds = time.perf_counter() - started
        if isinstance(got, Answer):
            outcomes.append(Outcome(question, got.paths[:LIMIT], seconds, got.answered))
        else:
            outcomes.append(Outcome(question, tuple(got)[:LIMIT], seconds))
    return outcomes


def _ratio(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """hit@1, hit@3, MRR, the no-answer rate and the median latency of a group of outcomes."""
    answerable = [o for o in outcomes if o.answerable]
    unanswerable = [o for o in outcomes if not o.answerable]
    ranks = [o.rank for o in answerable]
    reciprocal = sum(1 / rank for rank in ranks if rank)
    return {
        "n": len(outcomes),
        "answerable": len(answerable),
        "hit1": _ratio(sum(1 for rank in ranks if rank == 1), len(answerable)),
        "hit3": _ratio(sum(1 for rank in ranks if 1 <= rank <= 3), len(answerable)),
        "mrr": round(reciprocal / len(answerable), 4) if answerable else None,
        "falseEmpty": sum(1 for o in answerable if not o.returned),
        "noAnswer": len(unanswerable),
        "noAnswerEmpty": _ratio(sum(1 for o in unanswerable if not o.returned), len(unanswerable)),
        # issue 16: the share of unanswerable questions answered false, and of answerable ones
        "noAnswerFalse": _ratio(
            sum(1 for o in unanswerable if not o.says_answered), len(unanswerable)
        ),
        "falseAlarm": _ratio(sum(1 for o in answerable if not o.says_answered), len(answerable)),
        "p50Ms": round(statistics.median(o.seconds for o in outcomes) * 1000, 3)
        if outcomes
        else None,
    }


def _by_language(outcomes: Sequence[Outcome], language: str) -> list[Outcome]:
    return [o for o in outcomes if language == "all" or o.question.lang == language]


def measure(
    sets: Sequence[QuestionSet],
    corpora: Path,
    make_routers: RouterFactory = routers_for,
) -> dict[str, Any]:
    """Run every set whose bank exists under `corpora` through every ranker.

    Returns `{"rows": [...], "outcomes": {bank: {router: [Outcome, …]}}, "missing": [...],
    "unknownGold": {bank: [question id, …]}, "indexSeconds": {bank: seconds}}`. The rows hold
    one summary per corpus (and `ALL`), router and language.
    """
    from mbank.snapshot import Bank

    outcomes: dict[str, dict[str, list[Outcome]]] = {}
    missing: list[str] = []
    unknown_gold: dict[str, list[str]] = {}
    index_seconds: dict[str, float] = {}
    for question_set in sets:
        root = corpora / question_set.bank
        if not root.is_dir():
            missing.append(question_set.bank)
            continue
        snapshot = Bank(root).refresh()
        stale = [
            q.id for q in question_set.questions if any(g not in snapshot.docs for g in q.gold)
        ]
        if stale:
            unknown_gold[question_set.bank] = stale
        started = time.perf_counter()
        routers = make_routers(snapshot)
        index_seconds[question_set.bank] = round(time.perf_counter() - started, 4)
        outcomes[question_set.bank] = {
            name: ask(question_set.questions, router) for name, router in routers.items()
        }
    rows: list[dict[str, Any]] = []
    router_names = sorted({name for per_bank in outcomes.values() for name in per_bank})
    groups = [(bank, per_bank) for bank, per_bank in outcomes.items()]
    if len(outcomes) > 1:
        pooled = {
            name: [o for per_bank in outcomes.values() for o in per_bank.get(name, [])]
            for name in router_names
        }
        groups.append((ALL_CORPORA, pooled))
    for corpus, per_router in groups:
        for name in router_names:
            for language in LANGUAGES:
                summary = summarise(_by_language(per_router.get(name, []), language))
                rows.append({"corpus": corpus, "router": name, "lang": language, **summary})
    return {
        "rows": rows,
        "outcomes": outcomes,
        "missing": missing,
        "unknownGold": unknown_gold,
        "indexSeconds": index_seconds,
    }


# `bench/run.py` rows: the final ranker on a corpus target's held-out set.
RUN_ROWS: tuple[tuple[str, str, str], ...] = (
    ("route_quality_hit1", "route quality: hit@1, held-out set (final ranking)", "ratio"),
    ("route_quality_hit3", "route quality: hit@3, held-out set (final ranking)", "ratio"),
    ("route_quality_mrr", "route quality: MRR, held-out set (final ranking)", "ratio"),
    ("route_quality_no_answer", "route quality: no-answer questions given []", "ratio"),
    ("route_quality_header_hit3", "route quality: hit@3, header-only score", "ratio"),
)


def quality_for_bank(
    root: Path, sets_dir: Path = SETS, make_routers: RouterFactory = routers_for
) -> dict[str, float | None]:
    """The `RUN_ROWS` values for the bank at `root`; LookupError when it has no held-out set."""
    sets = [s for s in load_sets(sets_dir) if s.bank == root.name]
    if not sets:
        raise LookupError(f"no held-out question set for {root.name}")
    measured = measure(sets, root.parent, make_routers)
    rows = {(r["router"], r["lang"]): r for r in measured["rows"] if r["corpus"] == root.name}
    final, header = rows[("final", "all")], rows[("header", "all")]
    return {
        "route_quality_hit1": final["hit1"],
        "route_quality_hit3": final["hit3"],
        "route_quality_mrr": final["mrr"],
        "route_quality_no_answer": final["noAnswerEmpty"],
        "route_quality_header_hit3": header["hit3"],
    }


def run_metric(ctx: Any) -> dict[str, Any]:
    """A `bench/run.py` metric: `RUN_ROWS` for a corpus target that has a held-out set.

    Register it in `METRICS` as `Metric(run_metric, tuple(Row(*row) for row in RUN_ROWS))`.
    Generated banks and corpora without a set read `n/a`.
    """
    from bench.run import NotApplicable, Stat

    try:
        values = quality_for_bank(Path(ctx.target.root).resolve())
    except LookupError as exc:
        raise NotApplicable(str(exc)) from exc
    units = {key: unit for key, _, unit in RUN_ROWS}
    return {
        key: Stat(units[key], [value])
        if value is not None
        else Stat(units[key], status="n/a", note="the set has no such questions")
        for key, value in values.items()
    }


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.2f}" if value <= 1 else f"{value:.1f}"
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The Markdown table of every summary row."""
    header = (
        "| corpus | ranker | lang | answerable | hit@1 | hit@3 | MRR | no-answer | no-answer → [] "
        "| answerable → [] | no-answer → answered false | answerable → answered false | p50 ms |"
    )
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for row in rows:
        cells = [
            row["corpus"],
            row["router"],
            row["lang"],
            row["answerable"],
            row["hit1"],
            row["hit3"],
            row["mrr"],
            row["noAnswer"],
            row["noAnswerEmpty"],
            row["falseEmpty"],
            row["noAnswerFalse"],
            row["falseAlarm"],
            f"{row['p50Ms']:.2f}" if row["p50Ms"] is not None else None,
        ]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def format_misses(outcomes: Mapping[str, Mapping[str, Sequence[Outcome]]]) -> str:
    """Questions whose gold is not ranked first, and no-answer questions that got results."""
    lines: list[str] = []
    for bank, per_router in outcomes.items():
        for name, group in per_router.items():
            misses = [o for o in group if (o.rank != 1 if o.answerable else o.says_answered)]
            lines.append(f"\n## {bank} — {name}: {len(misses)} of {len(group)} not first")
            for outcome in misses:
                question = outcome.question
                where = f"rank {outcome.rank}" if outcome.rank else "absent"
                if not outcome.answerable:
                    where = "no answer expected"
                lines.append(f"- [{question.id} {question.lang}] {question.question}")
                lines.append(f"    gold: {', '.join(question.gold) or '(none)'} — {where}")
                top = ", ".join(outcome.returned[:3]) or "(empty)"
                lines.append(f"    top 3: {top}")
    return "\n".join(lines)


def _git_commit() -> str | None:
    try:
        from dulwich.repo import Repo

        with Repo(str(REPO)) as repo:
            return repo.head().decode()[:7]
    except Exception:
        return None


def report_json(measured: Mapping[str, Any], corpora: Path) -> dict[str, Any]:
    """The JSON written to `bench/results/`: environment, summary rows and per-question ranks."""
    from mbank.journal import mbank_version

    per_question = {
        bank: {
            name: [
                {
                    "id": o.question.id,
                    "lang": o.question.lang,
                    "rank": o.rank,
                    "answered": o.says_answered,
                    "returned": list(o.returned),
                }
                for o in group
            ]
            for name, group in per_router.items()
        }
        for bank, per_router in measured["outcomes"].items()
    }
    return {
        "mbankVersion": mbank_version(),
        "gitCommit": _git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpuCount": os.cpu_count(),
        "corpora": str(corpora),
        "limit": LIMIT,
        "missing": measured["missing"],
        "unknownGold": measured["unknownGold"],
        "indexSeconds": measured["indexSeconds"],
        "rows": measured["rows"],
        "questions": per_question,
    }


def main(
    argv: Sequence[str] | None = None,
    *,
    make_routers: RouterFactory = routers_for,
    results: Path = RESULTS,
) -> int:
    """Measure, print the table (and the misses with `--verbose`) and write the JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.route_quality",
        description="Routing quality on the held-out question sets (spec 02 §3.9).",
    )
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument(
        "--sets",
        type=Path,
        default=SETS,
        metavar="DIR",
        help="folder of question-set JSON files (default: tests/route_quality)",
    )
    parser.add_argument("--verbose", action="store_true", help="print per-question misses")
    args = parser.parse_args(argv)
    corpora: Path = args.corpora.resolve()
    measured = measure(load_sets(args.sets), corpora, make_routers)
    for bank in measured["missing"]:
        print(f"route_quality: no bank {bank!r} under {corpora}; set skipped", file=sys.stderr)
    for bank, ids in measured["unknownGold"].items():
        print(
            f"route_quality: {bank}: gold documents no longer in the bank for "
            f"{', '.join(ids)}; fix the set",
            file=sys.stderr,
        )
    if not measured["outcomes"]:
        print(
            f"route_quality: none of the question sets' banks is under {corpora}", file=sys.stderr
        )
        return 2
    print(format_table(measured["rows"]))
    if args.verbose:
        print(format_misses(measured["outcomes"]))
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = results / f"route-quality-{stamp}.json"
    out.write_text(json.dumps(report_json(measured, corpora), indent=2, ensure_ascii=False) + "\n")
    print(f"\nJSON: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
