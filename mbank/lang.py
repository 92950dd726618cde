"""The bilingual query layer: Russian stems ↔ English words, stop-words, light stemmers.

Banks are written in English; a question may be Russian. A query word becomes a *concept*:
the literal the user typed plus its equivalents in the other language (spec 02 §2). This
module holds the built-in dictionary (package data in `lang_data/`, read once per process and
never mutated), the per-bank vocabulary overlay (`dna/vocabulary.md`, new tables per snapshot),
Russian stemming by dictionary key with verbal-prefix stripping, the why-intent pattern, the
route tokeniser of §3.3 with its stop-words, the light stemmers of §3.9 (`ru_light`,
`en_light`, `hstem`) and the transliteration key of the §3.9 bridge.

Apart from reading its package data once per process, everything here is a pure function of
its arguments.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import msgspec
import snowballstemmer  # type: ignore[import-untyped]

from mbank.model import VocabularyRow
from mbank.package_data import tsv_rows

# --------------------------------------------------------------------------------------------
# The package data: dictionary, stop-words, endings, transliteration (files in lang_data/)
# --------------------------------------------------------------------------------------------

# The tables are data a translator edits, not code: they ship as tab-separated files beside
# this module (`mbank/lang_data/*.tsv`, package data in the wheel), are read once per process
# and are never mutated. Lines starting with `#` are comments; empty fields are kept, so a
# translit row `ь<TAB>` means "drop the letter".


def data_rows(name: str) -> tuple[tuple[str, ...], ...]:
    """The non-comment rows of `lang_data/<name>.tsv`, each split on tabs; read once."""
    return tsv_rows("mbank", "lang_data", f"{name}.tsv")


# The built-in dictionary (spec 02 §2.2, extended by the §3.9 procedure): a row is a Russian
# stem prefix and its English words. A key is the shortest prefix shared by the inflected forms
# it should catch; the longest matching key wins, which is how homonyms split (глав / главн,
# удален / удаленн, ответ / ответствен, жест / жестк). Several rows with the same key merge in
# order. Groups follow upstream's layers (bank structure, governance, decisions & delivery,
# product & domain, engineering; UI, content, users/data/sync), then the frequency-derived
# extension: the seed of `shared/data/ru-en-stems-extension.tsv` (reviewed) and stems counted
# in the Russian corpus by the same procedure.
def translation_rows(name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A Russian stem → English words table of `lang_data/` (a key, then its words)."""
    return as_translations(data_rows(name))


def as_translations(rows: Iterable[tuple[str, ...]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Table rows as (a Russian stem key, its English words)."""
    return tuple((row[0], tuple(word for word in row[1:] if word)) for row in rows)


ENTRIES = translation_rows("dictionary")
# One-way rows (issue 16, third pass): everyday and developer-chat Russian words, translated into
# English for Russian questions over English text; an English question does not look for them
# (`lang_data/colloquial.tsv` says why). A key the two-way dictionary also has keeps its words.
# The sixth pass adds two more one-way tables: `frequent.tsv`, the most frequent Russian words
# (by the `wordfreq` lists) that no other table translated, and `technical.tsv`, the words of
# software work in Russian; both are read after the colloquial table, whose keys come first.
ONE_WAY_TABLES = ("colloquial", "frequent", "technical")
COLLOQUIAL = tuple(row for name in ONE_WAY_TABLES for row in translation_rows(name))
# the keys of `frequent.tsv`, everyday Russian words: in a question they are mostly how the asker
# put it, not the topic (`route_answer.EVERYDAY_SHARE`, issue 16, tenth pass). No other table has
# one of these keys (tests/test_lang.py); a longer key of another table (раннер under ранн)
# wins for its words, so they are not everyday.
EVERYDAY_KEYS = frozenset(key for key, _ in translation_rows("frequent"))


class Tables(msgspec.Struct, frozen=True):
    """The derived lookup tables of one dictionary (built-in, or built-in plus a bank overlay)."""

    ru_to_en: dict[str, tuple[str, ...]]
    en_to_ru: dict[str, tuple[str, ...]]
    ru_keys: tuple[str, ...]


def build_tables(
    entries: Iterable[tuple[str, Sequence[str]]],
    one_way: Iterable[tuple[str, Sequence[str]]] = (),
) -> Tables:
    """Derive RU_TO_EN, EN_TO_RU and RU_KEYS from ordered entries (spec 02 §2.2).

    `one_way` rows add Russian keys and their English words to RU_TO_EN only, and only for keys
    the two-way entries lack.
    """
    ru_to_en: dict[str, list[str]] = {}
    en_to_ru: dict[str, list[str]] = {}
    order: list[str] = []
    for ru, words in entries:
        if ru not in ru_to_en:
            ru_to_en[ru] = []
            order.append(ru)
        ru_to_en[ru].extend(words)
        for word in words:
            keys = en_to_ru.setdefault(word, [])
            if ru not in keys:
                keys.append(ru)
    two_way = frozenset(ru_to_en)
    for ru, words in one_way:
        if ru in two_way:
            continue
        if ru not in ru_to_en:
            ru_to_en[ru] = []
            order.append(ru)
        ru_to_en[ru].extend(words)
    return Tables(
        ru_to_en={ru: tuple(words) for ru, words in ru_to_en.items()},
        en_to_ru={en: tuple(keys) for en, keys in en_to_ru.items()},
        # sorted() is stable: equal lengths keep entry order
        ru_keys=tuple(sorted(order, key=len, reverse=True)),
    )


BUILTIN: Tables = build_tables(ENTRIES, COLLOQUIAL)


@functools.lru_cache(maxsize=16)
def tables_for(vocabulary: tuple[VocabularyRow, ...]) -> Tables:
    """The tables of one bank: the built-in ones plus its `dna/vocabulary.md` rows (§2.5).

    A pure function of the rows, cached so that an unchanged vocabulary costs a lookup; a bank
    whose file disappeared passes `()` and gets the built-in tables back, which is how the
    overlay resets on the next refresh.
    """
    if not vocabulary:
        return BUILTIN
    return build_tables([*ENTRIES, *((row.stem, row.words) for row in vocabulary)], COLLOQUIAL)


# --------------------------------------------------------------------------------------------
# Stemming and query terms (spec 02 §2.3, §2.4)
# --------------------------------------------------------------------------------------------

_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
VERBAL_PREFIXES: tuple[str, ...] = (
    "пере",
    "раз",
    "при",
    "про",
    "под",
    "об",
    "за",
    "вы",
    "от",
    "до",
    "на",
)


def has_cyrillic(text: str) -> bool:
    """True when `text` holds a character of the Cyrillic block U+0400–U+04FF."""
    return _CYRILLIC.search(text) is not None


def _longest_key(word: str, tables: Tables) -> str | None:
    """The longest key of `tables` that `word` starts with.

    Looked up by the word's own prefixes, longest first, rather than by scanning `ru_keys`: the
    same key is found, at a cost that grows with the word, not with the table (issue 16, sixth
    pass, which grew the tables to thousands of keys).
    """
    keys = tables.ru_to_en
    for end in range(len(word), 0, -1):
        if word[:end] in keys:
            return word[:end]
    return None


def _dictionary_key(token: str, tables: Tables) -> tuple[str | None, bool]:
    """The dictionary key a Cyrillic token falls under, and whether a verbal prefix had to be
    stripped to find it (§2.3)."""
    if not has_cyrillic(token):
        return None, False
    # ё is optional in Russian writing: «упадёт» is looked up as «упадет» too when the table has
    # only that spelling (issue 16, fifth pass); the table's own ё-keys are tried first
    spellings = (token, token.replace("ё", "е")) if "ё" in token else (token,)
    found = _longest_of(_longest_key(word, tables) for word in spellings)
    if found is not None:
        return found, False
    for prefix in VERBAL_PREFIXES:
        if token.startswith(prefix) and len(token) - len(prefix) >= 4:
            found = _longest_of(_longest_key(word[len(prefix) :], tables) for word in spellings)
            if found is not None:
                return found, True
    return None, False


def _longest_of(keys: Iterable[str | None]) -> str | None:
    found = [key for key in keys if key is not None]
    return max(found, key=len) if found else None


def stem_of(token: str, tables: Tables = BUILTIN) -> str | None:
    """The dictionary key a Cyrillic token falls under, verbal prefixes stripped (§2.3)."""
    return _dictionary_key(token, tables)[0]


class QueryTerm(msgspec.Struct, frozen=True):
    """A query word as a concept: the literal plus its equivalents in the other language."""

    literal: str
    translations: tuple[str, ...]
    stem: str | None
    # the key was found only after stripping a verbal prefix (пере+загрузка -> загрузк): the
    # prefix often changes the meaning, so routing weighs such a translation less
    prefix_stripped: bool = False


def _unique(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


def term_for(token: str, tables: Tables = BUILTIN) -> QueryTerm:
    """The concept of one token (§2.4): Russian by stem, English by exact lookup."""
    if has_cyrillic(token):
        stem, stripped = _dictionary_key(token, tables)
        translations = _unique(tables.ru_to_en.get(stem, ())) if stem is not None else ()
        return QueryTerm(token, translations, stem, stripped)
    return QueryTerm(token, _unique(tables.en_to_ru.get(token, ())), None)


def expand_terms(tokens: Iterable[str], tables: Tables = BUILTIN) -> list[QueryTerm]:
    """`term_for` of each token, in order."""
    return [term_for(token, tables) for token in tokens]


# --------------------------------------------------------------------------------------------
# Stop-words, why-intent, the route tokeniser (spec 02 §2.6, §2.7, §3.3)
# --------------------------------------------------------------------------------------------


def words_of(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of a literal block, in order."""
    return tuple(text.split())


RU_STOP: frozenset[str] = frozenset(word for kind, word in data_rows("stopwords") if kind == "ru")

EN_ROUTE_STOP: frozenset[str] = frozenset(
    word for kind, word in data_rows("stopwords") if kind == "en"
)

ROUTE_STOP: frozenset[str] = EN_ROUTE_STOP | RU_STOP

# The route stop lists plus the function words they keep (`en_function`, `ru_function`): words
# that say nothing about whether a bank answers a question (`mbank.route_answer`, issue 16).
EVIDENCE_STOP: frozenset[str] = ROUTE_STOP | frozenset(
    word for kind, word in data_rows("stopwords") if kind in ("en_function", "ru_function")
)

WHY_INTENT = re.compile(
    r"(\bwhy\b|\brationale\b|\bdecision\b|\bdecided\b|instead of|trade-?off"
    # `решени` only at a word start, so «разрешений» (permissions) is not a why-question
    r"|почему|зачем|обоснован|вместо|\bрешени)",
    re.IGNORECASE,
)


def is_why(question: str) -> bool:
    """True when the raw question asks for a reason (§2.7), matched before tokenising."""
    return WHY_INTENT.search(question) is not None


_ROUTE_SPLIT = re.compile(r"[^a-z0-9\u0400-\u04ff]+")


def raw_tokens(text: str) -> list[str]:
    """Lower-case and split on §3.3's separators; every piece but the empty one, in order."""
    return [token for token in _ROUTE_SPLIT.split(text.lower()) if token]


def tokenize(text: str) -> list[str]:
    """The route tokeniser (§3.3): lower-case, split, drop 1-letter tokens and stop-words."""
    return [
        token
        for token in _ROUTE_SPLIT.split(text.lower())
        if len(token) > 1 and token not in ROUTE_STOP
    ]


# --------------------------------------------------------------------------------------------
# Light stemmers (spec 02 §3.9)
# --------------------------------------------------------------------------------------------

_EN_WORD = re.compile(r"[a-z]+")
_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")


def _has_vowel(text: str) -> bool:
    return any(char in _VOWELS for char in text)


def _undouble(word: str) -> str:
    last = word[-1:]
    if len(word) >= 2 and last == word[-2] and last not in _VOWELS and last not in _NO_UNDOUBLE:
        return word[:-1]
    return word


@functools.lru_cache(maxsize=65_536)
def en_light(token: str) -> str:
    """Light English stemming of `^[a-z]+$` tokens longer than 3 letters; others unchanged."""
    if len(token) <= 3 or not _EN_WORD.fullmatch(token):
        return token
    word = token
    # step 1: plurals
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("sses") or (
        len(word) > 4 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh"))
    ):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # step 2: -ing, -ied, -ed
    if len(word) > 5 and word.endswith("ing") and _has_vowel(word[:-3]):
        word = _undouble(word[:-3])
    elif len(word) > 4 and word.endswith("ied"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("ed") and _has_vowel(word[:-2]):
        word = _undouble(word[:-2])
    # step 3: final -e, final -y
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    elif len(word) > 4 and word.endswith("y"):
        word = word[:-1] + "i"
    return word


# in the spec's order (ties in length keep it)
RU_ENDINGS: tuple[str, ...] = tuple(row[0] for row in data_rows("ru_endings"))
# longest first, so the first ending that fits is the longest one that fits
_RU_ENDINGS_LONGEST_FIRST: tuple[str, ...] = tuple(sorted(RU_ENDINGS, key=len, reverse=True))


@functools.lru_cache(maxsize=65_536)
def ru_light(token: str) -> str:
    """Light Russian stemming: ё→е, drop -ся/-сь, then the longest listed ending (§3.9)."""
    word = token.replace("ё", "е")
    if word.endswith(("ся", "сь")) and len(word) - 2 >= 4:
        word = word[:-2]
    for ending in _RU_ENDINGS_LONGEST_FIRST:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


# The real stemmers (issue 16): Snowball's Russian and English (Porter2) algorithms, through
# `snowballstemmer` — pure Python, so mbank installs anywhere; it switches to PyStemmer's C
# build of the same algorithms by itself when that is installed, with identical stems.
_SNOWBALL_ENGLISH = snowballstemmer.stemmer("english")
_SNOWBALL_RUSSIAN = snowballstemmer.stemmer("russian")


STEM_MAX = 64


@functools.lru_cache(maxsize=131_072)
def stem(token: str) -> str:
    """The Snowball stem of a lower-case token: Russian for Cyrillic, English for `^[a-z]+$`.

    Other tokens (digits, identifiers) are returned unchanged; ё is read as е first, the way
    the banks spell it inconsistently. So are tokens longer than `STEM_MAX`: no word is, and
    the pure-Python Snowball English is quadratic on a long run of `y` (a 500 kB line took
    40 s).
    """
    if len(token) > STEM_MAX:
        return token
    if has_cyrillic(token):
        return str(_SNOWBALL_RUSSIAN.stemWord(token.replace("ё", "е")))
    if _EN_WORD.fullmatch(token):
        return str(_SNOWBALL_ENGLISH.stemWord(token))
    return token


def hstem(token: str) -> str:
    """The header stemmer (issue 16: Snowball for both languages; §3.9 had the light ones)."""
    return stem(token)


def body_form(token: str) -> str:
    """The body form route compares (issue 16): the Snowball stem, in either language."""
    return stem(token)


@functools.cache
def _other_spellings() -> dict[str, str]:
    """Snowball stem of a British or American spelling -> the word in the other spelling."""
    other: dict[str, str] = {}
    for british, american in data_rows("en_spelling"):
        other[stem(british)] = american
        other[stem(american)] = british
    return other


def other_spelling(token: str) -> str | None:
    """The same English word in the other spelling (`behaviour` -> behavior, `organised` ->
    organize; `lang_data/en_spelling.tsv`), or None (issue 16, seventh pass)."""
    if not _EN_WORD.fullmatch(token):
        return None
    return _other_spellings().get(stem(token))


# --------------------------------------------------------------------------------------------
# The transliteration bridge's key (spec 02 §3.9)
# --------------------------------------------------------------------------------------------

_TRANSLIT: dict[str, str] = {row[0]: "".join(row[1:]) for row in data_rows("translit")}
_NOT_LATIN = re.compile(r"[^a-z]+")
_BRIDGE_VOWELS = frozenset("aeiouy")


def transliterate(word: str) -> str:
    """Latin letters for a Russian word, by the §3.9 table (other characters kept)."""
    return "".join(_TRANSLIT.get(char, char) for char in word.lower())


@functools.lru_cache(maxsize=65_536)
def translit_key(word: str) -> str:
    """The consonant skeleton both sides of the bridge compare (§3.9).

    A Cyrillic word is transliterated first; then only a–z is kept, ph→f, th→t, ck→k, x→ks,
    c→k, q→k, w→v, z→s, every vowel after the first letter is dropped and doubled letters
    collapse. `дашборд` and `dashboard` both give `dshbrd`.
    """
    text = _NOT_LATIN.sub("", transliterate(word))
    for old, new in (("ph", "f"), ("th", "t"), ("ck", "k"), ("x", "ks")):
        text = text.replace(old, new)
    for old, new in (("c", "k"), ("q", "k"), ("w", "v"), ("z", "s")):
        text = text.replace(old, new)
    if not text:
        return ""
    skeleton = text[0] + "".join(char for char in text[1:] if char not in _BRIDGE_VOWELS)
    collapsed: list[str] = []
    for char in skeleton:
        if not collapsed or collapsed[-1] != char:
            collapsed.append(char)
    return "".join(collapsed)


def bridge_keys(token: str) -> list[str]:
    """The keys a Russian token tries against the bank's English words, in order (§3.9).

    `translit_key(ru_light(token))`, then the same without its last 1 and 2 letters, never
    shorter than 3 letters; a key shorter than 3 letters gives nothing.
    """
    key = translit_key(ru_light(token))
    if len(key) < 3:
        return []
    return [key[: len(key) - cut] for cut in (0, 1, 2) if len(key) - cut >= 3]
