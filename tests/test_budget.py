"""The token budget (spec 04 §7, 07 §3.29): what a project pays on every request.

Measured as 04 §7.1 says — the real server over stdio, the handshake-era protocol, the
characters of the instructions plus the compact JSON of the tools, prompts and resources
arrays — through `mbank surface-cost --json`, the same code a person runs. The parts and the
per-tool sizes are printed (`pytest -s`), so a regression names its cause.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixture_banks import copy_fixture

from mbank.budget import LIMITS, UPSTREAM_FULL, format_surface_cost
from mbank.cli import main
from mbank.surface import INSTRUCTIONS

pytestmark = pytest.mark.stdio


def test_every_surface_stays_within_its_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MBANK_LOG", raising=False)
    root = copy_fixture(tmp_path / "memory_bank", overlay=False)
    code = main(["--root", str(root), "surface-cost", "--json"])
    measured = json.loads(capsys.readouterr().out)
    assert code == 0
    with capsys.disabled():
        print("\n" + format_surface_cost(measured))
    surfaces = measured["surfaces"]
    full, seed, off = surfaces["full"], surfaces["seed"], surfaces["off"]

    assert (full["toolCount"], full["promptCount"], full["resourceCount"]) == (19, 5, 5)
    assert full["total"] <= LIMITS["full"] == 18_290 == int(0.75 * UPSTREAM_FULL)
    assert (seed["toolCount"], seed["promptCount"], seed["resourceCount"]) == (1, 0, 0)
    assert seed["total"] <= LIMITS["seed"] == 1_575
    assert (off["toolCount"], off["promptCount"], off["resourceCount"]) == (0, 0, 0)
    assert off["total"] <= LIMITS["off"] == 87
    # the parts add up, and the empty arrays count 2 characters each (04 §7.1)
    for part in surfaces.values():
        assert part["total"] == sum(
            part[name] for name in ("instructions", "tools", "prompts", "resources")
        )
    assert (off["tools"], off["prompts"], off["resources"]) == (2, 2, 2)
    assert off["instructions"] == len(INSTRUCTIONS["off"]) <= 78
    assert seed["instructions"] == len(INSTRUCTIONS["seed"])
    assert full["instructions"] == len(INSTRUCTIONS["full"])
    assert list(seed["perTool"]) == ["bank_init"]
    assert sum(full["perTool"].values()) + len(full["perTool"]) + 1 == full["tools"]
