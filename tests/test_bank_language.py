"""The server's instructions state the bank's language as measured (issue 15): a bank written
in Russian is not described as English, a mixed one as both."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from mbank.bank_language import bank_language, cyrillic_share, russian_share, sampled_language
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
    docs = Bank(str(tmp_path)).refresh().docs.values()
    assert russian_share((doc.purpose, doc.title) for doc in docs) == 1.0


@pytest.mark.parametrize(
    "purposes", [[ENGLISH] * 4, [RUSSIAN] * 4, [RUSSIAN, ENGLISH, ENGLISH, ENGLISH], []]
)
def test_the_sample_read_before_the_handshake_agrees_with_the_whole_bank(
    tmp_path: Path, purposes: list[str]
) -> None:
    root = bank_of(tmp_path / "bank", purposes)
    assert sampled_language(str(root)) == bank_language(Bank(str(root)).refresh().docs.values())


def test_the_sample_is_bounded_and_spread_over_directories(tmp_path: Path) -> None:
    root = tmp_path / "bank"
    for directory, purpose in (("a", ENGLISH), ("b", RUSSIAN), ("c", RUSSIAN)):
        (root / directory).mkdir(parents=True)
        for number in range(50):
            (root / directory / f"d{number:02}.md").write_text(
                f"---\ntitle: D\npurpose: {purpose}\n---\n# D\n", encoding="utf-8"
            )
    # 12 files from each directory: 2 of 3 Russian, as in the whole bank
    assert sampled_language(str(root)) == "Russian"


@pytest.mark.corpus
def test_the_sample_agrees_with_the_whole_bank_on_real_banks(corpus: dict[str, Path]) -> None:
    for root in corpus.values():
        whole = bank_language(Bank(str(root)).refresh().docs.values())
        assert sampled_language(str(root)) == whole


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
