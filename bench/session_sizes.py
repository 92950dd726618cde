"""Characters an agent receives at a session start: `python -m bench.session_sizes`.

Issue 16 asks for the size of each read resource and read-tool answer, before and after, on
both shared corpora. This script serves a copy of each bank with the real MCP server
(in process, through the SDK's `Client`) and counts the characters of what the agent reads:
each resource's text, each read tool's text item, the `session-start` prompt. Run it once
on this tree and once on an older tree to get the other column:

    python -m bench.session_sizes                       # this tree
    git archive <commit> | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base python bench/session_sizes.py --label before

`--compare A.json B.json` prints the two runs side by side. The calls are fixed per bank:
the first canonical knowledge document with at least two sections is read whole, by its
first section, and in a three-document batch; route and search ask one question each.
The figures are characters (≈ tokens × 3.5), not timings, so the machine load does not
move them; it is still printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
RESULTS = REPO / "bench" / "results"
QUESTIONS = {
    "IgorArkhipov__ai-setup": ("where does the config precedence live", "appStateRoot"),
    "dapi__code-converge": ("what happens when CI times out", "make docs-lint"),
}
KNOWLEDGE = ("domain/", "engineering/", "ops/", "product/")


def _pick_document(root: Path) -> tuple[str, str, list[str]]:
    """The first canonical knowledge document with two sections, its first section, a batch."""
    from mbank.snapshot import Bank

    snapshot = Bank(str(root)).refresh()
    candidates = [
        doc
        for path, doc in sorted(snapshot.docs.items())
        if path.startswith(KNOWLEDGE) and len(doc.sections) >= 2 and doc.doc_function != "index"
    ]
    doc = candidates[0]
    batch = [d.path for d in candidates[:3]]
    return doc.path, doc.sections[0].title, batch


async def _measure_bank(root: Path, bank: str) -> dict[str, Any]:
    from mcp import Client

    from mbank.server import build_server

    path, section, batch = _pick_document(root)
    question, literal = QUESTIONS.get(bank, ("how is this project released", "README"))
    sizes: dict[str, int] = {}
    async with Client(build_server(str(root))) as client:
        for item in (await client.list_resources()).resources:
            read = await client.read_resource(str(item.uri))
            sizes[f"resource {item.uri}"] = sum(len(getattr(c, "text", "")) for c in read.contents)
        templates = (await client.list_resource_templates()).resource_templates
        if any(t.uri_template == "memorybank://index/{section}" for t in templates):
            read = await client.read_resource("memorybank://index/features")
            sizes["resource memorybank://index/features"] = sum(
                len(getattr(c, "text", "")) for c in read.contents
            )
        calls: list[tuple[str, str, dict[str, Any]]] = [
            ("bank_route", "bank_route", {"question": question}),
            ("bank_search", "bank_search", {"query": literal}),
            ("bank_read whole", "bank_read", {"path": path}),
            ("bank_read section", "bank_read", {"path": path, "section": section}),
            ("bank_read batch of 3", "bank_read", {"path": batch}),
            ("bank_graph", "bank_graph", {"path": path}),
            ("bank_validate", "bank_validate", {}),
        ]
        for label, tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            sizes[label] = sum(len(getattr(c, "text", "")) for c in result.content)
        prompt = await client.get_prompt("session-start", {})
        sizes["prompt session-start"] = sum(
            len(getattr(m.content, "text", "")) for m in prompt.messages
        )
    section_bytes = 0
    from mbank.read import read as read_documents
    from mbank.snapshot import Bank

    content = read_documents(Bank(str(root)).refresh(), path, section=section)["content"]
    section_bytes = len(content)
    return {"path": path, "section": section, "sectionCharacters": section_bytes, "sizes": sizes}


def measure(corpora: Path, banks: Sequence[str]) -> dict[str, Any]:
    """Copy each bank, serve it, and count what a session start reads."""
    import anyio

    measured: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mbank-sizes-") as scratch:
        for bank in banks:
            source = corpora / bank
            if not source.is_dir():
                print(f"session_sizes: no bank {bank} under {corpora}", file=sys.stderr)
                continue
            copy = Path(scratch) / bank / "memory_bank"
            shutil.copytree(source, copy, symlinks=True)
            measured[bank] = anyio.run(_measure_bank, copy, bank)
    return measured


def format_table(runs: Mapping[str, Mapping[str, Any]]) -> str:
    """One Markdown table: a row per measured part, a column per run, per bank."""
    labels = list(runs)
    banks = sorted({bank for run in runs.values() for bank in run["banks"]})
    lines: list[str] = []
    for bank in banks:
        lines.append(f"\n{bank}\n")
        lines.append("| part | " + " | ".join(labels) + " |")
        lines.append("|---|" + "---:|" * len(labels))
        parts: list[str] = []
        for run in runs.values():
            for part in run["banks"].get(bank, {}).get("sizes", {}):
                if part not in parts:
                    parts.append(part)
        for part in parts:
            cells = [
                str(run["banks"].get(bank, {}).get("sizes", {}).get(part, "—"))
                for run in runs.values()
            ]
            lines.append(f"| {part} | " + " | ".join(cells) + " |")
        first = next(iter(runs.values()))["banks"].get(bank, {})
        if first:
            lines.append(
                f"\nread document: {first['path']}, section {first['section']!r} "
                f"({first['sectionCharacters']} characters of content)"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure (or compare two earlier runs), print the table, write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.session_sizes")
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--label", default="after")
    parser.add_argument("--compare", nargs="+", type=Path, metavar="JSON")
    args = parser.parse_args(argv)
    if args.compare:
        runs = {}
        for path in args.compare:
            data = json.loads(path.read_text(encoding="utf-8"))
            runs[data["label"]] = data
        print(format_table(runs))
        return 0
    started = time.perf_counter()
    banks = measure(args.corpora.resolve(), sorted(QUESTIONS))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    run = {"label": args.label, "load1": load, "banks": banks}
    print(format_table({args.label: run}))
    print(f"\n{time.perf_counter() - started:.1f} s, load {load}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = RESULTS / f"session-sizes-{args.label}-{stamp}.json"
    out.write_text(json.dumps(run, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"JSON: {out}")
    return 0


if __name__ == "__main__":
    if str(REPO) not in sys.path and "PYTHONPATH" not in os.environ:
        sys.path.insert(0, str(REPO))
    raise SystemExit(main())
