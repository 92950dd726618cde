"""Drift speed: `bank_drift` over 50 anchors in a 500-commit repository (spec 07 §6.2).

    python -m bench.drift_speed [--size 2000] [--seed 20260914] [--commits 500]
                                [--anchors 50] [--repeat 5] [--out DIR] [--json FILE]

Builds (or reuses) a generated bank with dulwich history (`bench.generate --git N`), keeps the
anchored documents whose anchors make up exactly `--anchors` distinct code paths (the others
are measured as unanchored), and reports the median of `--repeat` drift calls beside ONE
`git log --no-merges --name-only` over the same path set (every anchor and every anchored
document), measured in the same run when a `git` binary exists. Target: drift ≤ 3× git log.

`drift_50_anchors(ctx)` is the same measurement as a `bench.run` metric function.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

DEFAULT_SIZE = 2000
DEFAULT_SEED = 20260914
DEFAULT_COMMITS = 500
DEFAULT_ANCHORS = 50
DEFAULT_REPEAT = 5


def prepare(out: Path, size: int, seed: int, commits: int) -> Path:
    """A generated bank with `commits` dated commits at `out` (reused when already there)."""
    marker = out / ".drift-speed.json"
    wanted = {"size": size, "seed": seed, "commits": commits}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return out
    from bench.generate import generate

    if out.exists():
        shutil.rmtree(out)
    generate(size, seed, out, git_commits=commits)
    marker.write_text(json.dumps(wanted))
    return out


def with_anchors(snapshot: Any, count: int) -> tuple[Any, list[str], list[str]]:
    """The snapshot with anchors kept on documents (path order) up to `count` distinct anchors.

    Returns (snapshot, the distinct anchors, the anchored document paths). Documents whose
    anchors would go past `count` lose their anchors, so they count as unanchored.
    """
    chosen: list[str] = []
    kept: list[str] = []
    docs = {}
    for path, doc in snapshot.docs.items():
        new = [anchor for anchor in dict.fromkeys(doc.anchors) if anchor not in chosen]
        if doc.anchors and len(chosen) + len(new) <= count:
            chosen.extend(new)
            kept.append(path)
        elif doc.anchors:
            doc = msgspec.structs.replace(doc, anchors=())
        docs[path] = doc
    return msgspec.structs.replace(snapshot, docs=docs), sorted(chosen), kept


def time_drift(snapshot: Any, repeat: int) -> tuple[list[float], dict[str, Any]]:
    """Milliseconds of `repeat` drift calls, and the last result."""
    from mbank.drift import drift

    samples: list[float] = []
    result: dict[str, Any] = {}
    for _ in range(repeat):
        started = time.perf_counter_ns()
        result = drift(snapshot)
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples, result


def time_git_log(repo: Path, paths: list[str], repeat: int) -> list[float] | None:
    """Milliseconds of `repeat` runs of one `git log --name-only` over `paths`; None sans git."""
    git = shutil.which("git")
    if git is None:
        return None
    command = [git, "log", "--no-merges", "--name-only", "--format=%ct", "--", *paths]
    samples: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter_ns()
        subprocess.run(command, cwd=repo, capture_output=True, check=True)
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples


def run(root: Path, anchors: int = DEFAULT_ANCHORS, repeat: int = DEFAULT_REPEAT) -> dict[str, Any]:
    """Measure drift and git log on one generated bank with history; plain numbers."""
    from mbank import gitrepo
    from mbank.snapshot import Bank

    snapshot, chosen, kept = with_anchors(Bank(root).refresh(), anchors)
    found = gitrepo.open_bank_repo(snapshot.real_root)
    if found is None:
        raise SystemExit(f"{root} is not inside a git repository; generate it with --git")
    with found.repo as repo:
        head = gitrepo.head_commit(repo)
        commits = sum(1 for _ in repo.get_walker(include=[head.id])) if head else 0
        tree, prefix = found.tree, found.prefix
    paths = chosen + [gitrepo.join_repo_path(prefix, path) for path in kept]
    drift_ms, result = time_drift(snapshot, repeat)
    git_ms = time_git_log(Path(tree), paths, repeat)
    # context only: git's cost grows with the number of pathspecs
    anchors_only = time_git_log(Path(tree), chosen, repeat)
    whole_log = time_git_log(Path(tree), [], repeat)
    drift_median = statistics.median(drift_ms)
    git_median = statistics.median(git_ms) if git_ms else None
    return {
        "documents": len(snapshot.docs),
        "commits": commits,
        "anchors": len(chosen),
        "anchored": result.get("anchored"),
        "paths": len(paths),
        "drifted": len(result.get("drifted", [])),
        "missing": len(result.get("missing", [])),
        "drift_ms": drift_median,
        "drift_samples": drift_ms,
        "git_log_ms": git_median,
        "git_log_samples": git_ms,
        "ratio": (drift_median / git_median) if git_median else None,
        "git_log_anchors_only_ms": statistics.median(anchors_only) if anchors_only else None,
        "git_log_no_pathspec_ms": statistics.median(whole_log) if whole_log else None,
    }


def markdown(figures: dict[str, Any]) -> str:
    """The result as a Markdown table."""

    def number(value: Any, unit: str = "") -> str:
        if value is None:
            return "n/a (no git binary)"
        if isinstance(value, float):
            return f"{value:.1f}{unit}"
        return f"{value}{unit}"

    rows = [
        ("bank documents", number(figures["documents"])),
        ("commits reachable from HEAD", number(figures["commits"])),
        ("distinct anchors", number(figures["anchors"])),
        ("anchored documents", number(figures["anchored"])),
        ("paths in the one walk (anchors + anchored docs)", number(figures["paths"])),
        (
            "drifted pairs / missing pairs (threshold 90)",
            f"{figures['drifted']} / {figures['missing']}",
        ),
        ("mbank drift, median of 5", number(figures["drift_ms"], " ms")),
        (
            "one `git log --no-merges --name-only` over the same paths, median of 5",
            number(figures["git_log_ms"], " ms"),
        ),
        ("drift / git log (target ≤ 3×)", number(figures["ratio"], "×")),
        (
            "context: the same `git log` over the anchors only, median of 5",
            number(figures["git_log_anchors_only_ms"], " ms"),
        ),
        (
            "context: `git log --no-merges --name-only` with no pathspec, median of 5",
            number(figures["git_log_no_pathspec_ms"], " ms"),
        ),
    ]
    lines = ["| measure | value |", "|---|---|"]
    lines.extend(f"| {label} | {value} |" for label, value in rows)
    return "\n".join(lines)


def drift_50_anchors(ctx: Any) -> dict[str, Any]:
    """`bench.run` metric: drift over 50 anchors beside one `git log`, median of 5 each."""
    from bench.run import NotApplicable, Stat

    if not getattr(ctx.target, "git", False):
        raise NotApplicable("the bank has no git history; generate it with --git 500")
    repeat = DEFAULT_REPEAT * getattr(ctx, "repeat", 1)
    figures = run(Path(ctx.target.root), DEFAULT_ANCHORS, repeat)
    git_log = Stat("ms", list(figures["git_log_samples"] or []))
    if figures["git_log_samples"] is None:
        git_log.status, git_log.note = "n/a", "no git binary"
    ratio = Stat("x", [figures["ratio"]] if figures["ratio"] is not None else [])
    return {
        "drift_50": Stat("ms", list(figures["drift_samples"])),
        "drift_50_anchors": Stat("anchors", [figures["anchors"]]),
        "drift_50_git_log": git_log,
        "drift_50_ratio": ratio,
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point: build or reuse the bank, measure, print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.drift_speed", description=__doc__)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--commits", type=int, default=DEFAULT_COMMITS)
    parser.add_argument("--anchors", type=int, default=DEFAULT_ANCHORS)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--out", type=Path, help="where to build (or reuse) the bank")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.gettempdir()) / f"mbank-drift-{args.size}-{args.commits}"
    root = prepare(out, args.size, args.seed, args.commits)
    figures = run(root, args.anchors, args.repeat)
    print(markdown(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
