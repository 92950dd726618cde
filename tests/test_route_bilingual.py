"""Russian questions route to the same first document as their English counterparts (02 §2.1).

Each pair says the same thing in both languages, written by reading the documents (not their
titles word for word). The corpus pairs run in the opt-in corpus tier. Pairs that do not agree
today are kept as strict expected failures with the reason, so a fix shows up as an XPASS.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mbank.route import route
from mbank.search import SearchIndex
from mbank.snapshot import Bank

FIXTURE_PAIRS = [
    ("filter thresholds", "где пороги фильтрации"),
    (
        "why a single queue instead of per-tenant queues",
        "почему одна очередь вместо очередей на арендатора",
    ),
    ("frontmatter schema", "схема фронтматтера"),
    ("service architecture components", "компоненты архитектуры сервиса"),
    ("worker pool sizing", "размер пула воркеров"),
    ("retry layer backoff", "слой повторов и экспоненциальная задержка"),
    ("how do documents depend on each other", "как документы зависят друг от друга"),
    ("intake gate brief", "описание гейта приёма"),
    ("bank principles", "принципы банка"),
]

OVERLAY_PAIRS = [
    ("runtime configuration settings", "настройки конфигурации во время работы"),
    ("log fields", "поля логов"),
    ("how the price of a job is computed", "как считается цена задания"),
    ("read cache for scoring models", "кеш для моделей оценки"),
    ("domain glossary terms", "термины глоссария домена"),
]


def first(root: Path, index: SearchIndex, question: str) -> str | None:
    results = route(Bank(root).refresh(), index, question)["results"]
    return results[0]["path"] if results else None


@pytest.mark.parametrize(("english", "russian"), FIXTURE_PAIRS)
def test_russian_question_routes_like_english_on_the_base_fixture(
    fixture_bank: Path, english: str, russian: str
) -> None:
    index = SearchIndex()
    expected = first(fixture_bank, index, english)
    assert expected is not None
    assert first(fixture_bank, index, russian) == expected


@pytest.mark.parametrize(("english", "russian"), FIXTURE_PAIRS + OVERLAY_PAIRS)
def test_russian_question_routes_like_english_on_the_extended_fixture(
    fixture_plus: Path, english: str, russian: str
) -> None:
    index = SearchIndex()
    expected = first(fixture_plus, index, english)
    assert expected is not None
    assert first(fixture_plus, index, russian) == expected


AI_SETUP_PAIRS = [
    ("how are agent runtime logs detected", "как обнаруживаются логи агента во время работы"),
    ("release and deployment of the package", "релиз и деплой пакета"),
    ("git branch and commit style", "ветка и стиль коммитов в git"),
    ("testing policy and fixture strategy", "политика тестирования и стратегия фикстур"),
    ("configuration precedence and default roots", "приоритет конфигурации и корни по умолчанию"),
    ("local development environment setup", "настройка локального окружения разработки"),
    ("required frontmatter fields", "обязательные поля фронтматтера"),
    ("document lifecycle sync checklist", "чеклист синхронизации жизненного цикла документа"),
    ("terminal dashboard filter parity", "паритет фильтров терминального дашборда"),
    ("Zed provider support", "поддержка провайдера Zed"),
    ("task routing by type", "маршрутизация задач по типу"),
    ("agent autonomy boundaries and escalation", "границы автономии агента и эскалация"),
    (
        "two-way navigation between code and documentation",
        "двусторонняя навигация между кодом и документацией",
    ),
]

CODE_CONVERGE_PAIRS = [
    ("run state machine", "машина состояний запуска"),
    ("release and deployment contract", "контракт релиза и развертывания"),
    ("agent autonomy boundaries", "границы автономии агента"),
    ("bug fix flow", "флоу исправления бага"),
    ("incident response flow", "процесс реагирования на инцидент"),
    ("product roadmap", "дорожная карта продукта"),
    ("domain glossary terminology", "терминология глоссария домена"),
    ("customers and users", "клиенты и пользователи"),
    ("validation profiles depth", "глубина профилей валидации"),
    ("task routing", "маршрутизация задач"),
    ("testing policy", "политика тестирования"),
    ("YAML configuration", "конфигурация YAML"),
    # the typed `продукта` matches product/README.md's Russian purpose exactly; since the tenth
    # pass an index weighs 0.7, so product/metrics.md comes first, as in English
    ("product metrics", "метрики продукта"),
    pytest.param(
        "self-update command",
        "команда самообновления",
        marks=pytest.mark.xfail(
            strict=True,
            reason="no dictionary key or bridge word for `самообновления`; only `команда` "
            "(command, team) is left and product/customers.md wins on `team`",
        ),
    ),
]


@pytest.mark.corpus
@pytest.mark.parametrize(("english", "russian"), AI_SETUP_PAIRS)
def test_russian_question_routes_like_english_on_ai_setup(
    corpus: dict[str, Path], english: str, russian: str
) -> None:
    root, index = corpus["IgorArkhipov__ai-setup"], SearchIndex()
    expected = first(root, index, english)
    assert expected is not None
    assert first(root, index, russian) == expected


@pytest.mark.corpus
@pytest.mark.parametrize(("english", "russian"), CODE_CONVERGE_PAIRS)
def test_russian_question_routes_like_english_on_code_converge(
    corpus: dict[str, Path], english: str, russian: str
) -> None:
    root, index = corpus["dapi__code-converge"], SearchIndex()
    expected = first(root, index, english)
    assert expected is not None
    assert first(root, index, russian) == expected
