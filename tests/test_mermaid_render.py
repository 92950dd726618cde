"""`graph --format mermaid` renders with the real Mermaid CLI (issue 15).

The picture is drawn by `@mermaid-js/mermaid-cli` (`mmdc`, from npm) into an SVG: a syntax the
renderer rejects fails here, not in a reader's editor. The tier skips only when Node (`npx`) is
absent. `mmdc` drives a headless Chromium through puppeteer: `MBANK_MMDC` may name an installed
`mmdc`; the browser is `PUPPETEER_EXECUTABLE_PATH`, else Debian's `/usr/bin/chromium` when
present, else the one puppeteer downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mbank.graph import graph, render_mermaid
from mbank.snapshot import Bank

NPX = shutil.which("npx")
pytestmark = pytest.mark.skipif(NPX is None, reason="Node (npx) is not installed")


def _mmdc() -> list[str]:
    given = os.environ.get("MBANK_MMDC")
    if given:
        return [given]
    return [str(NPX), "--yes", "--package", "@mermaid-js/mermaid-cli", "mmdc"]


def _browser_config(directory: Path) -> Path:
    browser = os.environ.get("PUPPETEER_EXECUTABLE_PATH") or shutil.which("chromium")
    config: dict[str, object] = {"args": ["--no-sandbox"]}
    if browser:
        config["executablePath"] = browser
    path = directory / "puppeteer.json"
    path.write_text(json.dumps(config))
    return path


def _forty_node_bank(root: Path) -> Path:
    """A bank whose graph from its root has 40 nodes over several layers: a tree of three
    children per document, three levels deep."""
    layers = ["domain", "engineering", "adr", "features"]
    for index in range(40):
        folder = layers[index % 4]
        up = (index - 1) // 3
        parent = "" if index == 0 else f"derived_from:\n  - ../{layers[up % 4]}/d{up}.md\n"
        path = root / folder / f"d{index}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'---\ntitle: "Doc {index} | \\"quoted\\""\n{parent}---\n# Doc\n')
    return root


@pytest.mark.slow
def test_a_forty_node_graph_renders_as_svg_with_one_box_per_layer(tmp_path: Path) -> None:
    bank = _forty_node_bank(tmp_path / "bank")
    result = graph(Bank(str(bank)).refresh(), "domain/d0.md", depth=6, limit=60)
    picture = render_mermaid(result)
    assert picture.count("subgraph ") == len({node["layer"] for node in result["nodes"]})
    source = tmp_path / "graph.mmd"
    source.write_text(picture + "\n")
    target = tmp_path / "graph.svg"
    done = subprocess.run(
        [*_mmdc(), "-i", str(source), "-o", str(target), "-p", str(_browser_config(tmp_path))],
        capture_output=True,
        text=True,
        env={**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    svg = target.read_text()
    assert svg.startswith("<svg") and "Syntax error" not in svg
    assert "domain/d0.md" in svg
