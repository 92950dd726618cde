"""The bilingual query layer (spec 02 §2, §3.9 stemmers and bridge; acceptance 07 §3.5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mbank import lang
from mbank.lang import (
    BUILTIN,
    COLLOQUIAL,
    ENTRIES,
    RU_STOP,
    bridge_keys,
    build_tables,
    en_light,
    expand_terms,
    has_cyrillic,
    hstem,
    is_why,
    ru_light,
    stem_of,
    tables_for,
    term_for,
    tokenize,
    translit_key,
)
from mbank.model import VocabularyRow
from mbank.route import ROUTE_HINT, route
from mbank.search import SearchIndex, search, search_tokens
from mbank.snapshot import Bank

# --------------------------------------------------------------------------------------------
# The dictionary (§2.2)
# --------------------------------------------------------------------------------------------

SAMPLE_ENTRIES: dict[str, tuple[str, ...]] = {
    "банк": ("bank",),
    "формат": ("format", "formats"),
    "баз": ("base", "database"),
    "документ": ("document", "documentation", "docs"),
    "знани": ("knowledge",),
    "индекс": ("index",),
    "карантин": ("quarantine", "inbox"),
    "памят": ("memory",),
    "раздел": ("section",),
    "реестр": ("registry",),
    "слой": ("layer",),
    "шаблон": ("template",),
    "владел": ("owner", "canonical", "owns"),
    "гейт": ("gate",),
    "контракт": ("contract",),
    "правил": ("rule", "rules"),
    "принцип": ("principle", "principles"),
    "статус": ("status",),
    "схем": ("schema",),
    "фронтматтер": ("frontmatter",),
    "валидац": ("validation", "validate"),
    "провер": ("validation", "check", "verification"),
    "адр": ("adr",),
    "альтернатив": ("alternative", "alternatives"),
    "дизайн": ("design",),
    "доставк": ("delivery",),
    "задач": ("task",),
    "обоснован": ("rationale", "justification"),
    "план": ("plan", "planning"),
    "реш": ("decision", "adr", "decided"),
    "риск": ("risk", "risks"),
    "сценар": ("scenario", "use"),
    "требован": ("requirement", "requirements"),
    "фич": ("feature",),
    "эпик": ("epic",),
    "глоссар": ("glossary",),
    "домен": ("domain",),
    "контекст": ("context",),
    "метрик": ("metric", "metrics"),
    "продукт": ("product",),
    "словар": ("glossary", "vocabulary", "dictionary"),
    "событ": ("event", "events"),
    "состоян": ("state", "states"),
    "цел": ("goal", "goals"),
    "книг": ("book",),
    "слов": ("word", "words"),
    "библиотек": ("library",),
    "пользовател": ("user",),
    "уведомлен": ("notification",),
    "синхрониз": ("sync", "synchronization"),
    "обновлен": ("update",),
    "архитектур": ("architecture",),
    "модел": ("model", "models"),
    "аутентифик": ("authentication", "auth"),
    "авториз": ("authorization", "auth"),
    "бэкенд": ("backend",),
    "бекенд": ("backend",),
    "зависимост": ("dependency",),
    "миграц": ("migration",),
    "очеред": ("queue",),
    "подводн": ("gotcha", "gotchas"),
    "грабл": ("gotcha", "gotchas"),
    "репозитор": ("repository",),
    "сборк": ("build",),
    "сервис": ("service", "services"),
    "тест": ("test", "testing", "tests"),
    "фронтенд": ("frontend",),
    "ошибк": ("error", "errors"),
    "кеш": ("cache",),
    "кэш": ("cache",),
    "парс": ("parser", "parsing", "parse"),
    "сбор": ("collection", "collect"),
    "собир": ("collection", "collect"),
    "расширен": ("extension",),
    "блокировк": ("blocked", "block"),
    "заблокир": ("blocked", "block"),
    "выкат": ("deployment", "rollout"),
    "запрос": ("query", "request"),
    "поиск": ("search",),
    "маршрут": ("route", "routing"),
    "граф": ("graph",),
    "цикл": ("cycle", "cycles"),
    "фильтр": ("filter", "filtering"),
    "порог": ("threshold", "thresholds"),
    "конфиг": ("config", "configuration"),
    "настройк": ("config", "settings"),
    "депло": ("deployment", "deploy"),
    "разверт": ("deployment", "deploy"),
    "безопасн": ("security", "safety"),
    "окружен": ("environment",),
    "сесси": ("session",),
    "спецификац": ("specification", "spec"),
    "откат": ("rollback", "revert"),
    "ревью": ("review",),
    "обзор": ("review",),
    "экран": ("screen",),
    "страниц": ("page", "pages", "pagination"),
    "разбиен": ("split", "splitting", "pagination"),
    "кнопк": ("button",),
    "спис": ("list",),
    "интерфейс": ("interface", "ui"),
    "текст": ("text",),
    "перевод": ("translation", "translate"),
    "файл": ("file",),
    "устройств": ("device",),
    "загруз": ("load", "loading", "download"),
    "офлайн": ("offline",),
    "оффлайн": ("offline",),
    "сет": ("network",),
}


def test_dictionary_is_at_least_as_broad_as_upstream_and_holds_250_stems() -> None:
    assert len(ENTRIES) >= 192
    assert len(BUILTIN.ru_to_en) >= 250


def test_dictionary_covers_every_sample_entry_with_its_english_words() -> None:
    for stem, words in SAMPLE_ENTRIES.items():
        assert stem in BUILTIN.ru_to_en, stem
        assert set(words) <= set(BUILTIN.ru_to_en[stem]), stem


def test_dictionary_covers_the_areas_agents_ask_about() -> None:
    areas = {
        "агент": "agent",
        "депло": "deployment",
        "тест": "test",
        "фич": "feature",
        "эпик": "epic",
        "релиз": "release",
        "конфиг": "configuration",
        "интерфейс": "ui",
        "данн": "data",
        "безопасн": "security",
        "документ": "documentation",
        "ревью": "review",
    }
    for stem, word in areas.items():
        assert word in BUILTIN.ru_to_en[stem]


def test_dictionary_keys_are_lower_case_cyrillic_and_words_plain_english() -> None:
    for key, words in ENTRIES:
        assert re.fullmatch(r"[а-яё]+", key), key
        assert words, key
        for word in words:
            assert re.fullmatch(r"[a-z][a-z0-9_-]*", word), (key, word)


@pytest.mark.parametrize(
    ("word", "key", "english"),
    [
        ("глава", "глав", ("chapter",)),
        ("главный", "главн", ("main", "primary")),
        ("удаление", "удален", ("delete", "deletion")),
        ("удаленный", "удаленн", ("remote",)),
        ("ответ", "ответ", ("response", "answer")),
        ("ответственность", "ответствен", ("responsibility", "ownership")),
        ("жест", "жест", ("gesture",)),
        ("жесткий", "жестк", ("hard", "strict")),
        ("жёсткий", "жёстк", ("hard", "strict")),
    ],
)
def test_homonyms_split_by_the_longest_key(word: str, key: str, english: tuple[str, ...]) -> None:
    assert stem_of(word) == key
    assert term_for(word).translations[: len(english)] == english


def test_homonym_traps_named_by_the_spec_resolve_to_exact_form_keys() -> None:
    # разрешение must not become раз + реш ("decision"); понятие must not read as "understand"
    assert stem_of("разрешение") == "разреш"
    assert "decision" not in term_for("разрешений").translations
    assert term_for("понятие").translations == ("concept", "concepts")
    assert term_for("понять").translations == ("understand",)


def test_ru_keys_are_sorted_longest_first_keeping_entry_order_on_ties() -> None:
    keys = BUILTIN.ru_keys
    assert [len(key) for key in keys] == sorted((len(key) for key in keys), reverse=True)
    # the two-way entries first, then the one-way colloquial rows (issue 16, third pass)
    first_seen = list(dict.fromkeys(key for key, _ in (*ENTRIES, *COLLOQUIAL)))
    for length in {len(key) for key in keys}:
        assert [k for k in keys if len(k) == length] == [k for k in first_seen if len(k) == length]


def test_one_way_rows_translate_russian_to_english_but_not_back() -> None:
    tables = build_tables([("кот", ("cat",))], [("почт", ("mail", "email")), ("кот", ("tomcat",))])
    assert tables.ru_to_en == {"кот": ("cat",), "почт": ("mail", "email")}
    assert tables.en_to_ru == {"cat": ("кот",)}
    assert tables.ru_keys == ("почт", "кот")


def test_the_builtin_tables_translate_everyday_russian_one_way() -> None:
    assert term_for("почтового").translations == ("mail", "email")
    assert term_for("история").translations == ("history",)
    assert "mail" not in BUILTIN.en_to_ru and "history" not in BUILTIN.en_to_ru
    # a prefixed verb no longer falls under a shorter key by verbal-prefix stripping (на+чат)
    assert term_for("начать").translations == ("start", "begin")


def test_tables_merge_entries_with_one_key_and_list_en_to_ru_without_duplicates() -> None:
    tables = build_tables([("кот", ("cat",)), ("пёс", ("dog", "cat")), ("кот", ("kitten", "cat"))])
    assert tables.ru_to_en["кот"] == ("cat", "kitten", "cat")
    assert tables.en_to_ru["cat"] == ("кот", "пёс")
    assert tables.ru_keys == ("кот", "пёс")
    assert term_for("коты", tables).translations == ("cat", "kitten")


# --------------------------------------------------------------------------------------------
# Stemming and query terms (§2.3, §2.4)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["пороги", "порогов", "порогам", "порог"])
def test_every_form_of_porog_stems_to_its_key(word: str) -> None:
    assert stem_of(word) == "порог"


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("задеплоить", "депло"),
        ("переразвертывание", "разверт"),
        ("фильтрации", "фильтр"),
        ("решение", "реш"),
        ("запонтоваться", None),
    ],
)
def test_stem_examples_of_the_spec(word: str, stem: str | None) -> None:
    assert stem_of(word) == stem


def test_verbal_prefix_needs_four_letters_after_it() -> None:
    tables = build_tables([("тест", ("test",))])
    assert stem_of("затест", tables) == "тест"  # за + тест leaves exactly 4: allowed
    tables = build_tables([("тес", ("test",))])
    assert stem_of("затес", tables) is None  # за + тес leaves 3: not allowed


def test_latin_tokens_have_no_stem() -> None:
    assert stem_of("filter") is None
    assert not has_cyrillic("filter_thresholds")
    assert has_cyrillic("порог")


def test_terms_expand_russian_to_english_and_english_to_russian() -> None:
    assert term_for("пороги") == lang.QueryTerm("пороги", ("threshold", "thresholds"), "порог")
    assert term_for("threshold").translations == ("порог",)
    assert term_for("thresholds").translations == ("порог",)
    assert term_for("thresholding").translations == ()


def test_unknown_words_and_identifiers_pass_through_untranslated() -> None:
    for token in ("ft-042", "filter_thresholds", "kubernetes", "запонтоваться"):
        term = term_for(token)
        assert term.literal == token
        assert term.translations == ()


def test_expand_terms_keeps_token_order() -> None:
    terms = expand_terms(["фильтрации", "пороги"])
    assert [term.literal for term in terms] == ["фильтрации", "пороги"]


@pytest.mark.parametrize(
    ("word", "english"),
    [("книга", ("book",)), ("страницы", ("page", "pages", "pagination")), ("экран", ("screen",))],
)
def test_product_vocabulary_translates(word: str, english: tuple[str, ...]) -> None:
    assert term_for(word).translations == english


# --------------------------------------------------------------------------------------------
# Stop-words, why-intent, tokeniser (§2.6, §2.7, §3.3)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "why a single queue",
        "почему два формата",
        "trade-off of caching",
        "tradeoff of caching",
        "what was decided",
        "the decision on queues",
        "rationale",
        "зачем нужен кеш",
        "очередь вместо очередей",
        "решение по кешу",
        "instead of a cache",
    ],
)
def test_why_intent_fires_on_reason_questions(question: str) -> None:
    assert is_why(question)


@pytest.mark.parametrize(
    "question",
    ["filter thresholds", "где пороги фильтрации", "whyever", "список разрешений", "decisions"],
)
def test_why_intent_stays_quiet_otherwise(question: str) -> None:
    assert not is_why(question)


def test_route_tokenizer_splits_on_underscore_and_drops_stop_words() -> None:
    assert tokenize("Where are the filter_thresholds?") == ["filter", "thresholds"]
    assert tokenize("где пороги фильтрации") == ["пороги", "фильтрации"]
    assert tokenize("что как где") == []
    assert {"что", "за", "от"} <= RU_STOP


def test_cyrillic_search_tokens_drop_one_letter_words() -> None:
    assert search_tokens("пороги и фильтры") == ["пороги", "фильтры"]


# --------------------------------------------------------------------------------------------
# Light stemmers and the bridge (§3.9)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("sessions", "session"),
        ("checking", "check"),
        ("policies", "polici"),
        ("configured", "configur"),
        ("running", "run"),
        ("thresholds", "threshold"),
        ("filtering", "filter"),
        ("processes", "process"),
        ("classes", "class"),
        ("boxes", "box"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("ran", "ran"),
        ("ft042", "ft042"),
    ],
)
def test_en_light_examples(word: str, stem: str) -> None:
    assert en_light(word) == stem


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("пороги", "порог"),
        ("порогов", "порог"),
        ("фильтрации", "фильтра"),
        ("ёжики", "ежик"),
        ("настраивается", "настраива"),
        ("кот", "кот"),
    ],
)
def test_ru_light_strips_reflexive_then_the_longest_ending(word: str, stem: str) -> None:
    assert ru_light(word) == stem


def test_hstem_picks_the_stemmer_by_script() -> None:
    assert hstem("пороги") == "порог"
    assert hstem("thresholds") == "threshold"


@pytest.mark.parametrize(
    ("russian", "english"),
    [("дашборд", "dashboard"), ("вердикт", "verdict"), ("пушем", "push")],
)
def test_bridge_keys_meet_the_english_word(russian: str, english: str) -> None:
    assert translit_key(english) in bridge_keys(russian)


def test_bridge_keys_shorter_than_three_letters_give_nothing() -> None:
    assert bridge_keys("аи") == []
    assert translit_key("phoenix") == "fnks"


# --------------------------------------------------------------------------------------------
# Russian on the fixture bank, and the vocabulary overlay (§2.5)
# --------------------------------------------------------------------------------------------


def test_stop_word_question_routes_to_nothing(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    assert route(snapshot, SearchIndex(), "что как где") == {
        "results": [],
        "answered": False,
        "hint": ROUTE_HINT,
    }


def test_russian_why_question_reaches_the_threshold_owner(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    result = route(snapshot, SearchIndex(), "почему такие пороги фильтрации")
    assert result["results"][0]["path"] == "domain/rules.md"
    assert "filter_thresholds" in result["results"][0]["why"]


def test_russian_search_word_finds_the_english_rules(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    result = search(snapshot, SearchIndex(), "пороги")
    assert result["results"][0]["path"] == "domain/rules.md"


def test_identifiers_are_never_translated_in_search(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    result = search(snapshot, SearchIndex(), "FT-001")
    assert result["results"][0]["path"] == "features/FT-001/brief.md"


VOCABULARY = """---
title: Bank Vocabulary
doc_kind: governance
doc_function: canonical
purpose: Russian stems this bank adds to the built-in dictionary.
derived_from:
  - principles.md
status: active
---
# Bank Vocabulary

| Russian stem | English |
|---|---|
| вычитк | proofreading, proofread |
"""

PROOFREADING = """---
title: Proofreading Checklist
doc_kind: engineering
doc_function: canonical
purpose: What a proofreading pass checks before a page is published.
derived_from:
  - ../domain/rules.md
status: active
---
# Proofreading Checklist

## Steps

Read every sentence aloud once.
"""


def test_vocabulary_file_overlays_the_dictionary_and_resets_when_removed(
    fixture_bank: Path,
) -> None:
    (fixture_bank / "engineering" / "proofreading.md").write_text(PROOFREADING, encoding="utf-8")
    vocabulary = fixture_bank / "dna" / "vocabulary.md"
    vocabulary.write_text(VOCABULARY, encoding="utf-8")
    bank, index = Bank(fixture_bank), SearchIndex()

    snapshot = bank.refresh()
    assert snapshot.vocabulary == (VocabularyRow("вычитк", ("proofreading", "proofread")),)
    tables = tables_for(snapshot.vocabulary)
    assert term_for("вычитки", tables).translations == ("proofreading", "proofread")
    assert tables.en_to_ru["proofreading"] == ("вычитк",)
    assert "вычитк" in tables.ru_keys
    routed = route(snapshot, index, "вычитка")
    assert routed["results"][0]["path"] == "engineering/proofreading.md"

    vocabulary.unlink()
    snapshot = bank.refresh()
    assert snapshot.vocabulary == ()
    assert tables_for(snapshot.vocabulary) is BUILTIN
    assert term_for("вычитки", tables_for(snapshot.vocabulary)).translations == ()
    assert "вычитк" not in BUILTIN.ru_to_en  # the built-in tables were never mutated
    assert route(snapshot, index, "вычитка")["results"] == []


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("процентов", "percent"),  # not про + цен ("price")
        ("назначение", "assignment"),  # not на + знач ("value")
        ("приложение", "application"),
        ("разметка", "markup"),  # not раз + метк ("label")
        ("логичный", "logical"),  # not лог ("log")
        ("обязанности", "responsibilities"),
    ],
)
def test_exact_form_keys_beat_misleading_prefixes(word: str, english: str) -> None:
    assert term_for(word).translations[0] == english


# --------------------------------------------------------------------------------------------
# The real stemmers and the mined pairs (issue 16)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("forms", "expected"),
    [
        (("порог", "пороги", "порогов", "порогам"), "порог"),
        (("логи", "логов", "логам"), "лог"),
        (("релиз", "релиза", "релизов"), "релиз"),
        (("session", "sessions"), "session"),
        (("running", "run", "runs"), "run"),
        (("release", "released", "releases"), "releas"),
    ],
)
def test_the_snowball_stemmer_folds_inflected_forms_in_both_languages(
    forms: tuple[str, ...], expected: str
) -> None:
    assert {lang.stem(form) for form in forms} == {expected}
    assert {hstem(form) for form in forms} == {expected}


def test_stem_leaves_identifiers_and_numbers_alone_and_reads_yo_as_ye() -> None:
    assert lang.stem("ft-042") == "ft-042"
    assert lang.stem("842") == "842"
    assert lang.stem("v2") == "v2"
    assert lang.stem("ёлки") == lang.stem("елки")


def test_a_russian_question_reaches_a_russian_body_through_an_inflected_form(
    tmp_path: Path,
) -> None:
    bank = tmp_path / "bank"
    (bank / "ops").mkdir(parents=True)
    (bank / "ops" / "logging.md").write_text(
        "---\ntitle: Журналирование\npurpose: Где искать записи.\n---\n\n"
        "## Хранение\n\nЛоги хранятся тридцать дней, потом удаляются.\n",
        encoding="utf-8",
    )
    (bank / "ops" / "release.md").write_text(
        "---\ntitle: Выпуск\npurpose: Как выпускать версии.\n---\n\n"
        "## Шаги\n\nСобрать и отметить.\n",
        encoding="utf-8",
    )
    snapshot = Bank(bank).refresh()
    index = SearchIndex()
    result = route(snapshot, index, "сколько живут логов записи", limit=3)
    assert [item["path"] for item in result["results"]][:1] == ["ops/logging.md"]


def test_pairs_are_mined_from_russian_purposes_under_english_titles() -> None:
    from mbank.pairs import mine_pairs

    unique = ["альфа", "бета", "гамма", "дельта", "омега", "сигма", "каппа", "лямбда"]
    logs = [
        (f"features/FT-{n:03d}/decision-log.md", f"FT-{n:03d}: Log", f"Журнал {unique[n - 1]}")
        for n in range(1, 5)
    ]
    briefs = [
        (f"features/FT-{n:03d}/brief.md", f"FT-{n:03d}: Brief {n * 'x'}yz", f"Постановка {word}")
        for n, word in enumerate(unique, start=5)
    ]
    headers = logs + briefs
    pairs = mine_pairs(headers)
    assert pairs[lang.stem("журнал")] == ("log",)
    # `brief` stands in more than 40 % of the folders: it says nothing and pairs with nothing
    assert ("brief",) not in pairs.values()
    # a pair seen in a single folder is an accident, not evidence
    assert lang.stem("альфа") not in pairs and lang.stem("постановка") not in pairs
    # too few mixed folders: nothing is mined
    assert mine_pairs(headers[:3]) == {}
    # an English purpose under an English title is not a bilingual pair
    assert mine_pairs([(p, t, "Decision records") for p, t, _ in headers]) == {}


def test_a_token_longer_than_any_word_is_not_stemmed() -> None:
    # Snowball English in pure Python is quadratic on a run of `y`: it must never see one
    assert lang.stem("y" * 500_000) == "y" * 500_000
    assert lang.stem("y" * lang.STEM_MAX + "s") == "y" * lang.STEM_MAX + "s"


# --------------------------------------------------------------------------------------------
# technical.tsv: the words of software work in Russian (issue 16, sixth pass)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("table", ["technical", "frequent"])
def test_new_table_rows_have_a_cyrillic_key_and_plain_english_words(table: str) -> None:
    # issue 16, sixth pass: keys are lower-case Russian (ё allowed), words plain English
    rows = lang.translation_rows(table)
    assert len(rows) >= 300
    for key, words in rows:
        assert re.fullmatch(r"[а-яё]+", key), key
        assert 1 <= len(words) <= 3, key
        for word in words:
            assert re.fullmatch(r"[a-z]+", word), (key, word)


def test_technical_keys_shadow_no_key_of_the_older_tables_or_of_frequent() -> None:
    # a new key starting with an older one would take over the words that row translates today
    older = {key for key, _ in (*ENTRIES, *lang.translation_rows("colloquial"))}
    frequent = {key for key, _ in lang.translation_rows("frequent")}
    for key, _ in lang.translation_rows("technical"):
        assert not any(key.startswith(old) for old in older), key
        assert not any(key.startswith(other) for other in frequent), key
    for key in frequent:
        assert not any(key.startswith(old) for old in older), key


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("скомпилировал", ("compile",)),
        ("компилятора", ("compile", "compiler")),
        ("стектрейсы", ("stacktrace",)),
        ("утечки", ("leak",)),
        ("утечек", ("leak",)),
        ("костылей", ("workaround", "hack")),
        ("учётки", ("account",)),
        ("столбца", ("column",)),
        ("нажмите", ("press", "click")),
        ("виснет", ("hang", "freeze")),
        ("ротируют", ("rotate",)),
        ("протухший", ("stale", "expired")),
        ("эмбеддинги", ("embedding",)),
    ],
)
def test_technical_words_translate_in_their_inflected_forms(
    word: str, english: tuple[str, ...]
) -> None:
    assert term_for(word).translations == english
    # one way only: an English question does not look for these forms
    assert all(stem_of(word) not in keys for keys in BUILTIN.en_to_ru.values())


@pytest.mark.parametrize(
    ("word", "english"),
    [
        # homonyms that start with a technical key keep their own sense
        ("гитара", ("guitar",)),
        ("гитом", ("git",)),
        ("стекло", ("glass",)),
        ("стеке", ("stack",)),
        ("ботинок", ("boot", "shoe")),
        ("ботом", ("bot",)),
        ("демонстрация", ("demonstration", "demo")),
        ("монголия", ("mongolia",)),
        ("константин", ("konstantin",)),
        # a longer key of the older tables still wins (разработ, not the slang разраб)
        ("разработка", ("development", "develop")),
    ],
)
def test_technical_collisions_stay_avoided(word: str, english: tuple[str, ...]) -> None:
    assert term_for(word).translations == english


@pytest.mark.parametrize(
    ("word", "english"),
    [
        # seventh pass: developer chat; a prefixed verb has a row of its own, not a stripped match
        ("закоммитили", ("commit",)),
        ("смерджили", ("merge",)),
        ("раскатили", ("rollout", "deploy")),
        ("захардкоженный", ("hardcoded", "hardcode")),
        ("прокинули", ("pass", "forward")),
        ("залипает", ("stuck", "hang")),
        ("кронджобы", ("cron", "job")),
        # eighth pass: developer chat, nouns and verbs in their inflected forms
        ("дрейфа", ("drift",)),
        ("слайсы", ("slice",)),
        ("вендоров", ("vendor",)),
        ("айтемы", ("item",)),
        ("хелперы", ("helper",)),
        ("сабагентов", ("subagent",)),
        ("урлы", ("url",)),
        ("репой", ("repository",)),
        ("монорепы", ("monorepo",)),
        ("доках", ("docs",)),
        ("выкинул", ("remove", "drop")),
        ("прикрутил", ("attach", "add")),
        ("воткнул", ("insert", "add")),
        ("пинганул", ("ping",)),
        ("заинжектил", ("inject",)),
        ("ругается", ("complain", "warn")),
        ("мутный", ("unclear", "murky")),
        ("обёртки", ("wrapper",)),
        ("распределённый", ("distributed",)),
        # ninth pass: chat verbs of review and ops work, short chat nouns, adjectives of work
        ("накидал", ("draft", "suggest")),
        ("завезли", ("ship", "add")),
        ("заворачивают", ("wrap", "reject")),
        ("подкрутил", ("tweak", "adjust")),
        ("зашили", ("hardcode", "embed")),
        ("задизейблил", ("disable",)),
        ("засабмитил", ("submit",)),
        ("просадки", ("drop", "degradation")),
        ("доке", ("doc", "docs")),
        ("кредов", ("credentials",)),
        ("обвязку", ("wrapper", "glue")),
        ("затычки", ("stub", "placeholder")),
        ("инфры", ("infra", "infrastructure")),
        ("тудушки", ("todo",)),
        ("мутирующий", ("mutating", "mutate")),
        ("несвязанные", ("unrelated",)),
        ("незакоммиченные", ("uncommitted",)),
        ("хрупкий", ("fragile", "brittle")),
        # tenth pass: forms the older keys missed, and chat verbs of incidents and tickets
        ("чиним", ("fix", "repair")),
        ("заводит", ("create", "open")),
        ("докинуть", ("add", "include")),
        ("сдерживаем", ("contain", "restrain")),
        ("висит", ("hang", "stuck")),
        ("фигню", ("junk", "nonsense")),
        ("пачку", ("batch", "bunch")),
        # tenth pass, second cycle
        ("лезть", ("touch", "access")),
        ("сверяет", ("compare", "check")),
        ("расписывать", ("describe", "detail")),
        ("префиксом", ("prefix",)),
        ("фингерпринтов", ("fingerprint",)),
        ("подсунуть", ("substitute", "inject")),
        ("валится", ("fail", "break")),
        ("выплюнул", ("output", "emit")),
        ("помечать", ("mark", "label")),
        ("сгенерить", ("generate",)),
        ("копятся", ("accumulate", "pile")),
        ("затирая", ("overwrite", "erase")),
        ("причёсывали", ("tidy", "polish")),
        ("раскладе", ("scenario", "case")),
    ],
)
def test_developer_chat_words_translate_in_their_inflected_forms(
    word: str, english: tuple[str, ...]
) -> None:
    term = term_for(word)
    assert term.translations == english
    assert term.prefix_stripped is False
    # one way only: an English question does not look for these forms
    assert all(term.stem not in keys for keys in BUILTIN.en_to_ru.values())


@pytest.mark.parametrize(
    ("word", "english"),
    [
        # замер is a measurement, замержил a merge
        ("замержил", ("merge",)),
        # выпилил is removed, выпил (drank) stays untranslated
        ("выпил", ()),
        # таски are tasks, таскать is to drag
        ("таскать", ("drag", "carry")),
        # кривой конфиг is broken, кривая a curve
        ("кривая", ("curve",)),
        # железо is hardware, железобетон concrete
        ("железобетонных", ("concrete",)),
        # eighth pass
        # репу/репе are a repository, репутация and репетиция are not
        ("репутации", ("reputation",)),
        ("репетиция", ("rehearsal",)),
        # джун is a junior developer, джунгли a jungle; пинг a ping, пингвин and допинг not
        ("джунгли", ("jungle",)),
        ("пингвины", ("penguin",)),
        ("допинг", ("doping",)),
        # кинь (send) is no прикинь (estimate)
        ("прикинь", ("estimate",)),
        # a strip read these as spin and pool
        ("прикрутить", ("attach", "add")),
        ("запулил", ("pull",)),
        # stems of the older tables keep their words: поды is no key (под-), стабильность stays
        ("поды", ()),
        ("стабильность", ("stable",)),
        # tenth pass: заводит (opens a ticket) is no завод (a factory), докинуть no доки (docs)
        ("заводе", ("factory", "plant")),
        ("доки", ("doc", "docs")),
        # second cycle: расписание stays a schedule, валидация a validation, копировать a copy,
        # поверхность a surface, локальный local, сгенерировать its own row
        ("расписание", ("schedule",)),
        ("валидация", ("validation", "validate")),
        ("копировать", ("copy", "copies")),
        ("поверхность", ("surface",)),
        ("локальный", ("local", "locally")),
        ("сгенерировать", ("generate",)),
    ],
)
def test_developer_chat_keys_leave_other_senses_alone(word: str, english: tuple[str, ...]) -> None:
    assert term_for(word).translations == english


# issue 16, sixth pass: frequent.tsv, the most frequent Russian words no other table translated,
# and the dictionary rows that split a key giving a word the wrong sense


def test_frequent_keys_shadow_no_key_of_the_older_tables() -> None:
    # a frequent key that started with an older key would take over words that key translates
    older = {key for key, _ in (*ENTRIES, *lang.translation_rows("colloquial"))}
    technical = {key for key, _ in lang.translation_rows("technical")}
    for key, _ in lang.translation_rows("frequent"):
        assert not any(key.startswith(old) for old in older | technical - {key}), key


def test_the_everyday_keys_are_the_frequent_tables_and_no_other_tables() -> None:
    # a Russian word under one of them weighs as everyday speech (route_answer.EVERYDAY_SHARE)
    others = {
        key
        for name in ("dictionary", "colloquial", "technical")
        for key, _ in lang.translation_rows(name)
    }
    assert {key for key, _ in lang.translation_rows("frequent")} == lang.EVERYDAY_KEYS
    assert lang.EVERYDAY_KEYS.isdisjoint(others)
    assert term_for("заранее").stem in lang.EVERYDAY_KEYS
    # a longer key of another table wins for its words: раннер is a runner, not everyday
    assert term_for("раннер").stem not in lang.EVERYDAY_KEYS


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("россии", ("russia",)),
        ("жизни", ("life",)),
        ("площадке", ("platform", "site")),
        ("больнице", ("hospital",)),
        ("искусственный", ("artificial",)),
        ("искусство", ("art",)),
        ("деньги", ("money",)),
        ("продлить", ("extend", "renew")),
        ("зависает", ("hang", "freeze")),
        ("зависимость", ("dependency",)),
        ("редактор", ("editor",)),
        # выпускной is a graduation party and выпускник a graduate, not a release (выпуск)
        ("выпускной", ("graduation", "graduate")),
        ("выпускника", ("graduation", "graduate")),
        ("выпуском", ("release",)),
        # eleventh pass: доводка is finishing, not довод (argument); заведение of a ticket is its
        # creation, not вед (lead); a panel that вылезет pops up, it does not touch (лезет)
        ("доводки", ("polish", "finishing")),
        ("доводы", ("argument",)),
        ("заведении", ("creation", "create")),
        ("вылезет", ("appear", "show")),
        ("недоступен", ("unavailable", "unreachable")),
        ("абстракции", ("abstraction",)),
        ("развернуть", ("deploy", "expand")),
        ("переключить", ("switch", "toggle")),
        # командировка is a business trip, not a command or a team (команд)
        ("командировки", ("business", "trip", "travel")),
        ("командировочные", ("business", "trip", "travel")),
        ("командир", ("commander",)),
        ("командой", ("command", "commands", "team")),
        ("покупатель", ("buyer", "purchaser", "customer")),
        # a longer key where a short one gave the wrong sense: двух "two", скрин "screenshot"
        ("двухфакторку", ("two-factor", "2fa", "mfa")),
        ("скринридером", ("screen", "reader")),
        ("скриншот", ("screenshot",)),
        ("спрятать", ("hide", "hidden")),
        ("скачивает", ("download",)),
        # ninth pass, groups 1101-2200: the prefixed and homonym words a short key would catch
        # (стрела: выстрел, слуга: заслуга, земн: подземный, гром: громко) have rows of their own
        ("поклонников", ("fan", "admirer")),
        ("истребителей", ("fighter",)),
        ("велосипеде", ("bicycle", "bike")),
        ("скидку", ("discount",)),
        ("заложников", ("hostage",)),
        ("таможенных", ("customs",)),
        ("забастовку", ("strike",)),
        ("нехватки", ("shortage", "lack")),
        ("выстрелом", ("shot",)),
        ("заслуги", ("merit", "credit")),
        ("подземных", ("underground",)),
        ("громко", ("loud",)),
        ("плакать", ("cry",)),
        ("выявлять", ("identify", "reveal", "detect")),
        # ninth pass, developer chat: other senses its new keys would catch, and strip readings
        # that are direct rows now
        ("доказать", ("prove", "proof")),
        ("бампер", ("bumper",)),
        ("спекуляции", ("speculation",)),
        ("завернул", ("wrap", "reject")),
        ("просело", ("drop", "degradation")),
    ],
)
def test_frequent_words_and_split_keys_translate_in_their_sense(
    word: str, english: tuple[str, ...]
) -> None:
    assert term_for(word).translations == english


@pytest.mark.parametrize("word", ["следующий", "другой", "столько", "параметр", "метров"])
def test_a_frequent_key_never_catches_a_word_of_another_sense(word: str) -> None:
    # след, друг, стол, пара and метро were left out of frequent.tsv for these words
    assert not {"trace", "friend", "table", "pair", "subway"} & set(term_for(word).translations)


@pytest.mark.parametrize("word", ["сегодня", "поэтому", "лишь", "многие", "кстати", "вероятно"])
def test_frequent_function_words_carry_no_evidence(word: str) -> None:
    assert word in lang.EVIDENCE_STOP


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("жизнью", ("life",)),
        ("россией", ("russia",)),
        ("женщинами", ("woman",)),
        ("понимаете", ("understand",)),
        ("программирования", ("program", "programme")),
        ("вылетает", ("crash", "departure")),
        # лет: years, but лето is summer, летит flies and 10-летие an anniversary
        ("лет", ("year",)),
        ("летом", ("summer",)),
        ("летит", ("fly",)),
        ("летием", ("anniversary",)),
        # семь is seven, семьи a family
        ("семь", ("seven",)),
        ("семьями", ("family",)),
        # стран: countries, but странно is strange
        ("страной", ("country",)),
        ("странного", ("strange", "odd")),
    ],
)
def test_frequent_rows_translate_inflected_forms(word: str, english: tuple[str, ...]) -> None:
    assert term_for(word).translations == english
    assert "summer" not in BUILTIN.en_to_ru and "strange" not in BUILTIN.en_to_ru


# issue 16, seventh pass: groups 1-700 of the list recomputed after the sixth pass


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("заявил", ("declare", "announce")),
        ("станциях", ("station",)),
        ("хозяйственной", ("economy", "farm", "household")),
        ("федеральному", ("federal",)),
        ("ребятами", ("guys", "kids")),
        ("церковью", ("church",)),
        ("крыльями", ("wing",)),
        ("умерла", ("die",)),
        ("подозреваемых", ("suspect", "suspicion")),
        ("пенсионеров", ("pension", "retirement")),
    ],
)
def test_seventh_pass_frequent_rows_translate_inflected_forms(
    word: str, english: tuple[str, ...]
) -> None:
    assert term_for(word).translations == english


@pytest.mark.parametrize(
    ("word", "english"),
    [
        # стоя (stand) would catch об+стоятельства, крыл (wing) за+крыли, умер (died) умеренный,
        # страх (fear) страхование, орган (organ) организатор: each has a longer row
        ("обстоятельствах", ("circumstances", "situation")),
        ("закрыли", ("close", "closed")),
        ("умеренный", ("moderate",)),
        ("страхования", ("insurance",)),
        ("организаторы", ("organize", "organization")),
    ],
)
def test_seventh_pass_homonym_traps_get_their_own_rows(word: str, english: tuple[str, ...]) -> None:
    assert term_for(word).translations == english


@pytest.mark.parametrize("word", ["пошли", "всякий", "причём", "наоборот", "неужели"])
def test_seventh_pass_function_words_carry_no_evidence(word: str) -> None:
    assert word in lang.EVIDENCE_STOP


# issue 16, ninth pass: groups 1-1100 of the list recomputed after the eighth pass


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("воздушных", "air"),
        ("срочно", "urgent"),
        ("убрать", "remove"),
        ("заранее", "advance"),
        ("хоккеисты", "hockey"),
        ("голубого", "blue"),
        # a key per lemma or per sense where a short key would catch another word
        ("голубей", "dove"),
        ("материка", "continent"),
        ("охотно", "willingly"),
        ("прощения", "forgiveness"),
        ("плакаты", "poster"),
        ("плакать", "cry"),
        ("дорожек", "path"),
        ("прибытия", "arrival"),
    ],
)
def test_ninth_pass_frequent_words_translate_to_their_likeliest_sense_first(
    word: str, english: str
) -> None:
    assert term_for(word).translations[:1] == (english,)


def test_frequent_short_keys_do_not_mistranslate_prefixed_verbs() -> None:
    # вод (water) would catch про+водить and за+вод once the verbal prefix is stripped, стран
    # (country) would catch про+странство: the prefixed words have their own rows
    assert term_for("проводить").translations == ("conduct", "hold", "wire")
    assert term_for("завода").translations == ("factory", "plant")
    assert term_for("пространство").translations == ("space",)
    assert term_for("природы").translations == ("nature",)
    assert "water" not in term_for("приводит").translations
    # высшая is not высш(а) + США
    assert term_for("высшая").translations == ("higher", "supreme")


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("behaviour", "behavior"),
        ("behaviors", "behaviour"),
        ("organised", "organize"),
        ("organization", "organise"),
        ("colours", "color"),
        ("licence", "license"),
        ("catalogue", "catalog"),
        ("table", None),
        ("поведение", None),
    ],
)
def test_a_british_or_american_spelling_gives_the_other(word: str, other: str | None) -> None:
    assert lang.other_spelling(word) == other


def test_every_spelling_row_has_two_stems_and_no_stem_is_in_two_rows() -> None:
    rows = lang.data_rows("en_spelling")
    stems = [lang.stem(word) for row in rows for word in row]
    assert all(len(row) == 2 and lang.stem(row[0]) != lang.stem(row[1]) for row in rows)
    assert len(stems) == len(set(stems))
