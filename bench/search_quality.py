"""Search quality on literal queries: `python -m bench.search_quality`.

Issue 16 item 3: a literal (an identifier, a path, a flag, a defined term) should put the
document that *defines* it first. Each set in `tests/search_quality_test/` (held out: gold
chosen by reading, written before the ranking was changed) names a bank under `--corpora`;
every query goes to `bank_search` with `limit=10`. hit@k is the share whose first gold
document ranks at most k; MRR the mean of 1/rank. Two honesty checks ride along, for the
queries with punctuation (which the issue makes literals): `excerptShows` is the share of
literal (not word-piece) results whose excerpt contains the query, and `trueCounts` the share
whose `hits` equals the number of times the body really contains it. Prints a Markdown table
and writes JSON to `bench/results/search-quality-<timestamp>.json`; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "tests" / "search_quality_test"
DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
RESULTS = REPO / "bench" / "results"
LIMIT = 10
PUNCTUATED = re.compile(r"[^\w\s]|_", re.UNICODE)


def _rank(paths: Sequence[str], gold: Sequence[str]) -> int:
    for position, path in enumerate(paths, start=1):
        if path in gold:
            return position
    return 0


def measure_bank(root: Path, queries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Run each query on the bank at `root`; per-query ranks and the literal checks."""
    from mbank.parse import split_frontmatter
    from mbank.search import SearchIndex, search
    from mbank.snapshot import Bank

    snapshot = Bank(str(root)).refresh()
    index = SearchIndex()
    index.sync(snapshot)
    rows: list[dict[str, Any]] = []
    shown = counted = literal_results = 0
    seconds: list[float] = []
    for query in queries:
        started = time.perf_counter()
        result = search(snapshot, index, query["query"], limit=LIMIT)
        seconds.append(time.perf_counter() - started)
        paths = [hit["path"] for hit in result["results"]]
        rows.append({"id": query["id"], "rank": _rank(paths, query["gold"]), "top3": paths[:3]})
        if not PUNCTUATED.search(query["query"]):
            continue
        needle = query["query"].strip().lower()
        for hit in result["results"]:
            if hit.get("match") == "word-pieces":
                continue
            literal_results += 1
            body = split_frontmatter(snapshot.raw[hit["path"]]).body.lower()
            shown += needle in hit["excerpt"].lower()
            counted += hit["hits"] == body.count(needle)
    ranks = [row["rank"] for row in rows]
    return {
        "queries": len(rows),
        "hit1": round(sum(r == 1 for r in ranks) / len(ranks), 4),
        "hit3": round(sum(1 <= r <= 3 for r in ranks) / len(ranks), 4),
        "mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 4),
        "excerptShows": round(shown / literal_results, 4) if literal_results else None,
        "trueCounts": round(counted / literal_results, 4) if literal_results else None,
        "p50Ms": round(statistics.median(seconds) * 1000, 3),
        "rows": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every set whose bank exists, print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.search_quality")
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--sets", type=Path, default=SETS, metavar="DIR")
    parser.add_argument("--verbose", action="store_true", help="print each query's rank")
    args = parser.parse_args(argv)
    measured: dict[str, Any] = {}
    for path in sorted(args.sets.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        root = args.corpora / data["bank"]
        if not root.is_dir():
            print(f"search_quality: no bank {data['bank']}; set skipped", file=sys.stderr)
            continue
        measured[data["bank"]] = measure_bank(root, data["queries"])
    print("| corpus | queries | hit@1 | hit@3 | MRR | excerpt shows it | true counts | p50 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for bank, row in measured.items():
        print(
            f"| {bank} | {row['queries']} | {row['hit1']:.2f} | {row['hit3']:.2f} | "
            f"{row['mrr']:.2f} | {row['excerptShows']} | {row['trueCounts']} | {row['p50Ms']} |"
        )
    if measured:
        every = [r for row in measured.values() for r in row["rows"]]
        ranks = [r["rank"] for r in every]
        print(
            f"| all | {len(ranks)} | {sum(r == 1 for r in ranks) / len(ranks):.2f} | "
            f"{sum(1 <= r <= 3 for r in ranks) / len(ranks):.2f} | "
            f"{sum(1 / r for r in ranks if r) / len(ranks):.2f} | | | |"
        )
    if args.verbose:
        for bank, row in measured.items():
            for entry in row["rows"]:
                if entry["rank"] != 1:
                    print(f"- {bank} {entry['id']}: rank {entry['rank']}, top 3 {entry['top3']}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"\nload (1 min): {load}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = RESULTS / f"search-quality-{stamp}.json"
    out.write_text(
        json.dumps({"load1": load, "sets": str(args.sets), "banks": measured}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"JSON: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
