"""Which frequent Russian words a change to a one-way table of `mbank/lang_data/` translates anew.

A check for a translator adding rows to the one-way `technical.tsv` (issue 16, eighth pass) or
`frequent.tsv` (ninth pass; `--table frequent`), not a test: it needs `wordfreq` (never an mbank
dependency; `pip install wordfreq` into the venv). The built-in tables are built twice, once
with the table as it is at `--base` (a git revision, `main` by default) and once with the file
in the working tree; every Cyrillic form of the wordfreq `ru` top-N list (ё read as е, as the
lookup does) is then looked up in both. It prints

- the forms that were translated before and whose English words changed: a new key took over
  a word an older row translated (the count must be 0, or each line must be meant);
- the forms that were untranslated and now are, grouped by the key that translates them, so a
  key that catches another lemma's forms shows (репу catching репутацию, стаб стабилизацию).

    python -m bench.lang_table_check --base main --top 50000 [--table frequent]
"""

from __future__ import annotations

import argparse
import subprocess
from collections import defaultdict
from pathlib import Path

from wordfreq import top_n_list  # type: ignore[import-not-found, unused-ignore]

from mbank import lang
from mbank.package_data import parse_tsv


def rows_of(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The (key, words) rows of a table's text, read as the package reads its own tables."""
    return lang.as_translations(parse_tsv(text))


def tables_with(table: str, rows: tuple[tuple[str, tuple[str, ...]], ...]) -> lang.Tables:
    """The built-in tables with `rows` in place of the one-way table `table`."""
    one_way = tuple(
        row
        for name in lang.ONE_WAY_TABLES
        for row in (rows if name == table else lang.translation_rows(name))
    )
    return lang.build_tables(lang.ENTRIES, one_way)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="git revision of the table before")
    parser.add_argument("--top", type=int, default=50_000, help="wordfreq ru forms to look up")
    parser.add_argument(
        "--table", choices=lang.ONE_WAY_TABLES, default="technical", help="the table changed"
    )
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    table = f"mbank/lang_data/{args.table}.tsv"
    before_text = subprocess.run(
        ["git", "-C", str(root), "show", f"{args.base}:{table}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    before_rows = rows_of(before_text)
    after_rows = rows_of((root / table).read_text("utf-8"))
    before, after = tables_with(args.table, before_rows), tables_with(args.table, after_rows)
    forms = dict.fromkeys(
        word.replace("ё", "е") for word in top_n_list("ru", args.top) if lang.has_cyrillic(word)
    )
    changed: list[str] = []
    new: dict[str, list[str]] = defaultdict(list)
    for form in forms:
        old_term, new_term = lang.term_for(form, before), lang.term_for(form, after)
        if old_term.translations == new_term.translations:
            continue
        if old_term.translations:
            changed.append(
                f"  {form}: {old_term.stem} {' '.join(old_term.translations)}"
                f" -> {new_term.stem} {' '.join(new_term.translations)}"
            )
        else:
            stripped = " (prefix stripped)" if new_term.prefix_stripped else ""
            new[f"{new_term.stem}{stripped}"].append(form)
    print(f"{args.table} rows: {len(before_rows)} at {args.base}, {len(after_rows)} now")
    print(f"wordfreq ru top-{args.top}: {len(forms)} Cyrillic forms looked up")
    print(f"translated before, translation changed: {len(changed)}")
    print("\n".join(changed))
    print(f"untranslated before, translated now: {sum(map(len, new.values()))}")
    for key, words in sorted(new.items()):
        english = " ".join(after.ru_to_en[key.split()[0]])
        print(f"  {key} [{english}]: {' '.join(words)}")


if __name__ == "__main__":
    main()
