"""The server's instructions state the bank's language as measured (issue 15): a bank written
in Russian is not described as English, a mixed one as both."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from mbank.bank_language import bank_language, cyrillic_share, russian_share
from mbank.server import build_server
from mbank.snapshot import Bank
from mbank.surface import INSTRUCTIONS, full_instructions


def bank_of(root: Path, purposes: list[str]) -> Path:
    (root / "dna").mkdir(parents=True)
    for number, purpose in enumerate(purposes):
        (root / f"doc-{number}.md").write_text(
            f"---\ntitle: Doc {number}\npurpose: {purpose}\n---\n# Doc\n", encoding="utf-8"
        )
    return root


RUSSIAN = "Описывает очередь задач и правила справедливости для tenant."
ENGLISH = "Describes the job queue and its fairness rules."


def test_cyrillic_share_counts_letters_only() -> None:
    assert cyrillic_share("да, ok!") == 0.5
    assert cyrillic_share("123 -- !") is None


@pytest.mark.parametrize(
    ("purposes", "language"),
    [
        ([ENGLISH] * 4, "English"),
        ([RUSSIAN] * 4, "Russian"),
        ([RUSSIAN, ENGLISH, ENGLISH, ENGLISH], "Russian and English"),
        ([RUSSIAN] * 3 + [ENGLISH], "Russian"),
        ([], "English"),
    ],
)
def test_the_language_is_measured_from_the_purposes(
    tmp_path: Path, purposes: list[str], language: str
) -> None:
    docs = Bank(str(bank_of(tmp_path / "bank", purposes))).refresh().docs.values()
    assert bank_language(docs) == language


def test_a_document_without_a_purpose_counts_by_its_title(tmp_path: Path) -> None:
    (tmp_path / "dna").mkdir()
    (tmp_path / "a.md").write_text("---\ntitle: Правила очереди\n---\n# A\n", encoding="utf-8")
    assert russian_share(Bank(str(tmp_path)).refresh().docs.values()) == 1.0


@pytest.mark.anyio
async def test_a_russian_bank_is_not_described_as_english(tmp_path: Path) -> None:
    root = bank_of(tmp_path / "project" / "memory_bank", [RUSSIAN] * 3)
    async with Client(build_server(str(root))) as client:
        instructions = client.instructions
    assert instructions == full_instructions("Russian")
    assert "Documents are in Russian; pass each question exactly as it was asked" in (
        instructions or ""
    )
    assert "English" not in (instructions or "")


def test_the_english_instructions_are_the_reference_text() -> None:
    assert full_instructions("English") == INSTRUCTIONS["full"]
