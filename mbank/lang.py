"""The bilingual query layer: Russian stems ↔ English words, stop-words, light stemmers.

Banks are written in English; a question may be Russian. A query word becomes a *concept*:
the literal the user typed plus its equivalents in the other language (spec 02 §2). This
module holds the built-in dictionary (a module constant, parsed once at import and never
mutated), the per-bank vocabulary overlay (`dna/vocabulary.md`, new tables per snapshot),
Russian stemming by dictionary key with verbal-prefix stripping, the why-intent pattern, the
route tokeniser of §3.3 with its stop-words, the light stemmers of §3.9 (`ru_light`,
`en_light`, `hstem`) and the transliteration key of the §3.9 bridge.

Everything here is a pure function of its arguments.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import msgspec

from mbank.model import VocabularyRow

# --------------------------------------------------------------------------------------------
# The built-in dictionary (spec 02 §2.2, extended by the §3.9 procedure)
# --------------------------------------------------------------------------------------------

# One entry a line: `<ru stem>: <en>, <en>, …`. A key is the shortest prefix shared by the
# inflected forms it should catch; the longest matching key wins, which is how homonyms split
# (глав / главн, удален / удаленн, ответ / ответствен, жест / жестк). Several lines with the
# same key merge in order. Groups follow upstream's layers (bank structure, governance,
# decisions & delivery, product & domain, engineering; UI, content, users/data/sync), then
# the frequency-derived extension: the seed of `shared/data/ru-en-stems-extension.tsv`
# (reviewed) and stems counted in the Russian corpus by the same procedure.
_DICTIONARY = """
# bank structure
банк: bank
формат: format, formats
документ: document, documentation, docs
знани: knowledge
индекс: index
карантин: quarantine, inbox
памят: memory
раздел: section
реестр: registry
слой: layer
слоя: layer, layers
слои: layer, layers
слоев: layer, layers
слоем: layer
слою: layer
шаблон: template
каталог: directory, folder, catalog
папк: folder, directory
навигац: navigation
входящ: inbox, incoming
заметк: note, notes
черновик: draft
корнев: root
корен: root
# governance
владел: owner, canonical, owns
владе: own, owner, owns
гейт: gate
контракт: contract
правил: rule, rules
принцип: principle, principles
статус: status
схем: schema
фронтматтер: frontmatter
валидац: validation, validate
провер: validation, check, verification
каноническ: canonical
управлен: governance, management
регламент: policy, regulation
политик: policy
запрещ: forbidden, prohibited
обязательн: mandatory, required
конвенц: convention
соглашен: convention, agreement
стандарт: standard
наследован: inheritance, derived
зависимост: dependency
циклическ: cyclic, cycle
# decisions and delivery
адр: adr
реш: decision, adr, decided
разреш: permission, allow, permissions
альтернатив: alternative, alternatives
дизайн: design
доставк: delivery
задач: task
задани: task, job, assignment
обоснован: rationale, justification
план: plan, planning
планировщик: scheduler
риск: risk, risks
сценар: scenario, use
требован: requirement, requirements
фич: feature
эпик: epic
релиз: release, releases
выпуск: release
верси: version, versions
дорожн: roadmap
роадмап: roadmap
этап: stage, phase
стади: stage
спринт: sprint
бэклог: backlog
беклог: backlog
приоритет: priority
оцен: estimate, evaluation, assessment, score
срок: deadline, timeline
инцидент: incident
баг: bug, bugs
дефект: defect, bug
исправ: fix
рефактор: refactoring, refactor
исследован: research
гипотез: hypothesis
эксперимент: experiment
отмен: cancel, cancelled
одобр: approve, approval
согласов: approval, approve
аппрув: approve, approval
# product and domain
продукт: product
домен: domain
глоссар: glossary
контекст: context
метрик: metric, metrics
словар: glossary, vocabulary, dictionary
событ: event, events
состоян: state, states
цел: goal, goals
целостн: integrity
клиент: customer, client
заказчик: customer, client
рынк: market
рынок: market
маркетинг: marketing
видени: vision
ценност: value
персон: persona
аудитор: audience
модел: model, models
сущност: entity, entities
термин: term, terms
поняти: concept, concepts
проект: project
проектир: design
процесс: process
подход: approach
арендатор: tenant
тенант: tenant
гуманиз: humanization
# engineering
архитектур: architecture
аутентифик: authentication, auth
авториз: authorization, auth
баз: base, database
бэкенд: backend
бекенд: backend
фронтенд: frontend
миграц: migration
очеред: queue
подводн: gotcha, gotchas
грабл: gotcha, gotchas
репозитор: repository
сборк: build
собра: build, assemble
сервис: service, services
тест: test, testing, tests
ошибк: error, errors
ошиб: error, errors
кеш: cache
кэш: cache
парс: parser, parsing, parse
сбор: collection, collect
собир: collection, collect
расширен: extension
блокировк: blocked, block
заблокир: blocked, block
выкат: deployment, rollout
запрос: query, request
поиск: search
маршрут: route, routing
граф: graph
цикл: cycle, cycles
фильтр: filter, filtering
порог: threshold, thresholds
конфиг: config, configuration
настройк: config, settings
настро: configure, setup, settings
депло: deployment, deploy
разверт: deployment, deploy
безопасн: security, safety
окружен: environment
сесси: session
спецификац: specification, spec
откат: rollback, revert
ревью: review
обзор: review
рецензи: review
код: code
кодировк: encoding
модул: module, modules
пакет: package, packages
библиотек: library
интеграц: integration
апи: api
эндпоинт: endpoint
протокол: protocol
сервер: server
лог: log, logs, logging
логир: logging
журналир: logging
логик: logic
логин: login
мониторинг: monitoring
алерт: alert, alerts
трассир: tracing
производительн: performance
нагрузк: load
масштабир: scaling, scale
поток: stream, thread, flow
асинхрон: async, asynchronous
синхрон: sync, synchronous
транзакц: transaction
хранилищ: storage, store
файл: file
директор: directory
скрипт: script
терминал: terminal
консол: console
флаг: flag, flags
параметр: parameter, parameters
аргумент: argument, arguments
переменн: variable, variables
опци: option, options
ключ: key, keys
токен: token, tokens
тип: type, types
типиз: typing, types
функц: function, functions
функциональн: functionality, functional
класс: class
метод: method
объект: object
обработ: processing, handling
обработчик: handler
исключен: exception
ответ: response, answer
ответствен: responsibility, ownership
вызов: call, invocation
вызыва: call, calls
контейнер: container
докер: docker
кластер: cluster
инфраструктур: infrastructure
пайплайн: pipeline
конвейер: pipeline
линт: lint, linter
форматир: formatting, format
стил: style
разработ: development, develop
разработчик: developer, developers
подготов: prepare, preparation
установ: install, installation, setup
запуст: run, launch, start
прогон: run, pass
отлад: debug, debugging
диагност: diagnostics
сбо: failure, outage
пада: fail, crash
авари: crash, emergency
восстанов: restore, recovery
резерв: backup, reserve
бэкап: backup
задержк: delay, latency
таймаут: timeout
ретра: retry
экспоненциальн: exponential
лимит: limit
огранич: limit, constraint, restriction
квот: quota
воркер: worker
работник: worker
исполнител: executor, runner
диспетчер: dispatcher
оценщик: scorer
скоринг: scoring
справедлив: fairness
изоляц: isolation
реплик: replica, replication
емкост: capacity
ёмкост: capacity
пропускн: throughput
пул: pool
прием: intake, reception
приём: intake, reception
отклон: reject, rejection
отказ: refusal, reject, failure
балл: score, points
уровен: level
# agents
агент: agent, agents
субагент: subagent, subagents
промпт: prompt, prompts
промт: prompt, prompts
инструкц: instruction, instructions
автоном: autonomy, autonomous
оркестр: orchestration, orchestrator
навык: skill, skills
инструмент: tool, tools
хук: hook, hooks
плагин: plugin, plugins
делегир: delegate, delegation
ассистент: assistant
помощник: assistant, helper
ии: ai
нейросет: ai, neural
чат: chat
диалог: dialog, conversation
сообщен: message, messages
# version control
коммит: commit, commits
мерж: merge
слиян: merge
реквест: request
дифф: diff
патч: patch
тег: tag, tags
# security
уязвим: vulnerability
шифр: encryption, cipher
парол: password
секрет: secret, secrets
доступ: access
привилег: privilege, privileges
аудит: audit
угроз: threat
атак: attack
подпис: signature, signing
защит: protection, protect
# testing
юнит: unit
интеграционн: integration
регресс: regression
фикстур: fixture, fixtures
мок: mock, mocks
смоук: smoke
ассерт: assert, assertion
снапшот: snapshot, snapshots
бенчмарк: benchmark
# deployment and releases
публикац: publication, publish
опублик: publish
стенд: environment, stage
прод: production, prod
продакшн: production
продакшен: production
продолж: continue
продвиж: promotion, promote
стейдж: staging
хостинг: hosting
дистрибутив: distribution
бинарн: binary
архив: archive
журнал: log, journal
отчет: report
отчёт: report
# data
данн: data
датасет: dataset
дат: date
врем: time
запис: record, write, entry
экспорт: export
импорт: import
выгрузк: export
уникальн: unique
# documentation
руководств: guide, manual
справк: reference, help
справочник: reference
пример: example, examples
комментар: comment, comments
вики: wiki
# user interface
экран: screen
страниц: page, pages, pagination
разбиен: split, splitting, pagination
кнопк: button
спис: list
интерфейс: interface, ui
текст: text
перевод: translation, translate
меню: menu
окн: window
форм: form, forms
формир: build, generate
формул: formula
вкладк: tab
иконк: icon
макет: layout, mockup
верстк: layout
шрифт: font
цвет: color
тема: theme, topic
темн: dark
адаптив: responsive
мобильн: mobile
десктоп: desktop
браузер: browser
клавиатур: keyboard
жест: gesture
жестк: hard, strict
жёстк: hard, strict
свайп: swipe
прокрутк: scroll, scrolling
анимац: animation
модальн: modal
подсказк: hint, tooltip
отображ: display, render
рендер: render, rendering
# content
книг: book
слов: word, words
глав: chapter
главн: main, primary
стать: article, articles
статей: articles
абзац: paragraph
параграф: paragraph
предлож: proposal, suggestion
цитат: quote, citation
изображен: image
картинк: image, picture
видео: video
аудио: audio
контент: content
заголов: heading, title
назван: name, title
автор: author
обложк: cover
язык: language
# users, data and sync
пользовател: user
устройств: device
уведомлен: notification, notifications
загруз: load, loading, download
синхрониз: sync, synchronization
офлайн: offline
оффлайн: offline
онлайн: online
обновлен: update
сет: network
сетап: setup
регистрац: registration, signup
профил: profile
аккаунт: account
учетн: account
подписк: subscription
оплат: payment
платеж: payment
цен: price, pricing
тариф: pricing, plan
заказ: order
корзин: cart
поддержк: support
локализ: localization, locale
приватн: privacy, private
конфиденциальн: privacy, confidential
персональн: personal
удал: delete, remove, deletion
удален: delete, deletion
удаленн: remote
удалённ: remote
# frequency-derived extension (seed list, reviewed)
чита: read, reading
работ: work, job
текущ: current
отдельн: separate
фикс: record, fix
измен: change, changes
менят: change
меняе: change, changes
меняю: change
поменя: change
треб: require, requires
кажд: each, every
реализац: implementation
аннотированн: annotated
добав: add, adds
оста: remain, stay
результ: result, outcome
вход: input, entry, included
созда: create, creates
команд: command, commands, team
нов: new
один: one, single
описыва: describe, describes
локальн: local, locally
друг: other, another
содерж: contain, contains, content
использ: use, uses, usage
существ: existing, exist
полн: full, complete
пут: path
конкретн: specific, concrete
жив: live, lives
ссылк: link, links, reference
ссыла: reference, link, refer
готов: ready, done
хран: store, storage, stored
обнов: update, updates
перв: first
покрыва: cover, covers
покрыт: coverage
зафикс: record, pin, fix
отсутств: missing, absent
поня: understand
понятн: clear
причин: reason, cause
инстанц: instantiate, instance
счита: count, considered
объем: scope, volume
готовн: readiness, ready
порядок: order
порядк: order
факт: fact, facts
вопрос: question, questions
минимальн: minimal, minimum
запуск: run, launch, start
необходим: necessary, required
проход: pass, passes
выбор: choice, selection
выбира: choose, select
выбр: choose, select, selected
основн: main, primary, core
ожидаем: expected
строк: line, lines, string
выполн: execute, run, perform
копир: copy, copies
получ: get, receive
показыва: show, shows
принят: accepted, adopted
принима: accept, accepts
артефакт: artifact, artifacts
устойчив: stable, durable
остават: remain, stay
стабильн: stable
корректн: correct, correctly
возвраща: return, returns
блок: block, blocks
зада: set, define
коротк: short
паттерн: pattern, patterns
человек: human, person
доступн: available, accessible
сохран: save, keep, persist
соответств: corresponding, matches
реализов: implemented, implement
закрыт: closed
закрыва: close, closes
приемк: acceptance
приёмк: acceptance
действ: action, actions
повтор: repeat, retry
ручн: manual
вручн: manual, manually
определ: define, defines, determine
прям: direct
инициатив: initiative
допуст: allowed, acceptable
отвеча: responsible, answer
следующ: next
важн: important
переход: transition, transitions
будущ: future
уровн: level
сложн: complex
появл: appear, appearance
переопредел: override, overrides
начина: start, begin
останов: stop
пуст: empty
поле: field, fields
поля: field, fields
полей: field, fields
дополнительн: additional, extra
станов: become, becomes
заменя: replace, replaces
замен: replace, replacement
финальн: final
общ: common, shared, general
опис: description, describe
внешн: external
открыт: open
автоматическ: automatic, automatically
исходн: source, original
возможн: possible
независим: independent, independently
таблиц: table
наход: find, finds
смеш: mixing, mix
завис: depend, depends, dependency
идентификатор: identifier, id
замеч: remark, remarks, findings
единиц: unit, units
структур: structure
втор: second
критери: criteria, criterion
имплементац: implementation
компактн: compact
активн: active
обычн: usual, usually
влия: affect, affects, impact
параллельн: parallel
набор: set
связ: related, link, relation
атомарн: atomic
конфликт: conflict, conflicts
источник: source
заверш: complete, completion, finish
секц: section
подтвержд: confirm, confirmation
начал: start, beginning
лома: break, breaks
старт: start
последн: last, latest
предметн: domain, subject
разн: different
различ: difference, differences
точк: point
верн: return
повед: behavior, behaviour
найт: find
знач: value, values
принадлеж: belong, belongs
рабоч: working, work
внутренн: internal
умолч: default
вед: lead, leads
кратк: brief, short
бизнес: business
мест: place, location
публичн: public
компонент: component, components
укаж: specify
указ: specify, point
остальн: rest, remaining
част: part
включ: include, includes, enable
применим: applicable
применя: apply, applies
релевантн: relevant
организац: organization
дублир: duplicate, duplicates
ветк: branch, branches
вид: see, view
# exact-form keys where a verbal prefix or a short key would mislead
процент: percent, percentage
назнач: assignment, assign, purpose
приложен: application, app
разметк: markup
логич: logical
обязанност: responsibilities, duties
# stems counted in the Russian corpus and not yet covered (§3.9 procedure)
явн: explicit, explicitly
границ: boundary, boundaries
вместо: instead
итог: outcome, result
вывод: output, conclusion
выход: exit, output
отправ: send
отслеж: tracking, track
отметк: mark, marker
метк: label, tag
подключ: connect, connection
переда: pass, transfer, handoff
пересмотр: revision, review
обсужд: discussion, discuss
област: area, scope
обучен: training, learning
размер: size
разбор: analysis, parsing
разделен: separation, split
договор: agreement, contract
напис: write, written
писа: write, writing
объясн: explain, explanation
вариант: option, variant, variants
случа: case, cases
пункт: item, items
шаг: step, steps
цепоч: chain
адрес: address
центр: center, central
мокап: mockup, mockups
логотип: logo
формальн: formal
виджет: widget
местн: local
часто: often, frequent
одинаков: same, identical
новост: news
общени: communication
значок: badge, icon
значк: badge, icon
приемлем: acceptable
график: chart, schedule
графическ: graphical, graphic
планшет: tablet
продаж: sales
случайн: random
зелен: green
зелён: green
достаточн: sufficient, enough
систем: system, systems
реальн: real
обязан: required, obliged
наблюдаем: observable
анализ: analysis
крупн: large
больш: large, big
самостоятельн: standalone, independent
истинн: true, truth
процедур: procedure
коммич: commit, committed
пуш: push
проблем: problem, problems
неизвестн: unknown
известн: known
аудир: audit, auditable
исполн: execution, execute
затронут: affected
реализу: implement, implements
неоднозначн: ambiguous, ambiguity
операционн: operational
операц: operation, operations
относительн: relative
среда: environment
среды: environment
среде: environment
точн: precise, accuracy
улучш: improve, improvement
аспект: aspect, aspects
элемент: element, elements
интерпрет: interpret, interpretation
эскал: escalation, escalate
расширя: extend, extends
противореч: contradiction, conflict
скрыт: hidden
ввод: input, introduce
регистрир: register, registered
аннотац: annotation, annotations
услов: condition, conditions
перечисл: list, enumerate
инженер: engineering, engineer
декомпоз: decomposition
итерац: iteration, iterations
одновременн: concurrent, simultaneous
основани: basis, grounds
управля: manage, control
строг: strict
успешн: successful, success
успех: success
эталон: reference, golden, baseline
симптом: symptom, symptoms
незаверш: incomplete, unfinished
актуальн: current, up-to-date
отража: reflect, reflects
потер: loss
сторон: side, party
перенос: move, transfer
взаимодейств: interaction
контрол: control
собственн: own
недостающ: missing
убед: ensure, verify
ссылок: links, references
чернов: draft
метаданн: metadata
механизм: mechanism
качеств: quality
режим: mode, modes
совместим: compatible, compatibility
карточк: card, cards
оператор: operator
диаграмм: diagram, diagrams
информац: information
канал: channel, channels
расхожд: divergence, drift
критическ: critical
длинн: long
предел: limit, bounds
направлен: direction
промежуточн: intermediate
подробн: detail, details
представлен: representation, view
измер: measure, measurement
недоступн: unavailable
переименов: rename
уточн: clarify, clarification
техническ: technical
автоматизир: automation, automated
эффективн: efficient, effective
последств: consequences
глубин: depth
двусторонн: bidirectional, two-way
единственн: single, sole
един: single, unified
гарант: guarantee, guarantees
детерминир: deterministic
воспроизвод: reproducible
инвариант: invariant, invariants
# Frequent words of the Russian bank text the entries above missed (same procedure: document
# frequency of `ru_light` stems across the real banks, not yet covered, translated). Many are
# function words and common verbs: without an entry the transliteration bridge guessed an
# English look-alike for them (нужен → nash, внутри → want, пишет → push, матрице → matter),
# so a faithful translation — an English stop-word where that is what the word means — keeps
# a Russian question as neutral as its English counterpart (§2.1).
после: after
между: between
через: via, through
перед: before
внутр: inside, internal, within
сначал: first
сраз: immediately
нескольк: several, multiple
нуж: need, needed, required
долж: must, should
явля: is
котор: which
этого: this
этом: this
этой: this
этим: this
того: that
него: it
быва: are
будет: will
будут: will
умеет: can
умеют: can
дела: do, make
сдела: do, make
имеет: have
имеют: have
иметь: have
держ: keep, hold
поддерж: support
одн: one, single
однозначн: unambiguous, unambiguously
двух: two
два: two
две: two
показ: show, shown
покаж: show
обязател: mandatory, required
подтверд: confirm, confirmation, approve
законч: finish, finished, complete
конец: end
конц: end
концепц: concept, concepts
стар: old, legacy
стави: set
мелк: small, minor
правк: edit, fix, change
пиш: write, writes
спрашива: ask
спрос: ask
запрашива: request, ask
пропад: disappear, missing
произойд: happen, occur
произошл: happened
происход: happen, occur
чист: clean
очист: cleanup, clean
дерев: tree
никак: none
пояснен: explanation, note, comment
поясн: explain, explanation
испорт: corrupt, break, broken
участи: participation, involvement
участв: participate, involved
необратим: irreversible, destructive
обратим: reversible
обеща: promise
платн: paid
оплат: paid, billing
упавш: failed, failing
упал: failed
отключ: disable, disabled, off
выключ: disable, disabled, off
возможност: capability, capabilities, possibility
матриц: matrix
джоб: job, jobs
автотест: test, tests, automated
выпуст: release
подним: start, run, launch
"""


def _parse_dictionary(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    entries: list[tuple[str, tuple[str, ...]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, words = line.partition(":")
        entries.append((key.strip(), tuple(w.strip() for w in words.split(",") if w.strip())))
    return tuple(entries)


ENTRIES: tuple[tuple[str, tuple[str, ...]], ...] = _parse_dictionary(_DICTIONARY)


class Tables(msgspec.Struct, frozen=True):
    """The derived lookup tables of one dictionary (built-in, or built-in plus a bank overlay)."""

    ru_to_en: dict[str, tuple[str, ...]]
    en_to_ru: dict[str, tuple[str, ...]]
    ru_keys: tuple[str, ...]


def build_tables(entries: Iterable[tuple[str, Sequence[str]]]) -> Tables:
    """Derive RU_TO_EN, EN_TO_RU and RU_KEYS from ordered entries (spec 02 §2.2)."""
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
    return Tables(
        ru_to_en={ru: tuple(words) for ru, words in ru_to_en.items()},
        en_to_ru={en: tuple(keys) for en, keys in en_to_ru.items()},
        # sorted() is stable: equal lengths keep entry order
        ru_keys=tuple(sorted(order, key=len, reverse=True)),
    )


BUILTIN: Tables = build_tables(ENTRIES)


@functools.lru_cache(maxsize=16)
def tables_for(vocabulary: tuple[VocabularyRow, ...]) -> Tables:
    """The tables of one bank: the built-in ones plus its `dna/vocabulary.md` rows (§2.5).

    A pure function of the rows, cached so that an unchanged vocabulary costs a lookup; a bank
    whose file disappeared passes `()` and gets the built-in tables back, which is how the
    overlay resets on the next refresh.
    """
    if not vocabulary:
        return BUILTIN
    return build_tables([*ENTRIES, *((row.stem, row.words) for row in vocabulary)])


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


def _longest_key(word: str, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if word.startswith(key):
            return key
    return None


def stem_of(token: str, tables: Tables = BUILTIN) -> str | None:
    """The dictionary key a Cyrillic token falls under, verbal prefixes stripped (§2.3)."""
    if not has_cyrillic(token):
        return None
    found = _longest_key(token, tables.ru_keys)
    if found is not None:
        return found
    for prefix in VERBAL_PREFIXES:
        if token.startswith(prefix) and len(token) - len(prefix) >= 4:
            found = _longest_key(token[len(prefix) :], tables.ru_keys)
            if found is not None:
                return found
    return None


class QueryTerm(msgspec.Struct, frozen=True):
    """A query word as a concept: the literal plus its equivalents in the other language."""

    literal: str
    translations: tuple[str, ...]
    stem: str | None


def _unique(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


def term_for(token: str, tables: Tables = BUILTIN) -> QueryTerm:
    """The concept of one token (§2.4): Russian by stem, English by exact lookup."""
    if has_cyrillic(token):
        stem = stem_of(token, tables)
        translations = _unique(tables.ru_to_en.get(stem, ())) if stem is not None else ()
        return QueryTerm(token, translations, stem)
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


RU_STOP: frozenset[str] = frozenset(
    words_of(
        """что как где когда кто почему зачем какой какая какие каком который которая которые это
    этот эта эти том для или при над под про из по на не ни но же ли бы мы вы он она они его её
    их мне мой моя наш был была быть есть нет так там тут ещё еще уже только если чтобы нужно
    надо можно все всё весь себя чем без до от за"""
    )
)

EN_ROUTE_STOP: frozenset[str] = frozenset(
    words_of(
        """the a an of in on for to and or is are what where how which that this do does when why
    who with about i we it not no from but its has have had was were be been being can could
    should would may might must will as at by if into than then there these those them they
    you my our us me any all some such only also just very each both get got"""
    )
)

ROUTE_STOP: frozenset[str] = EN_ROUTE_STOP | RU_STOP

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


RU_ENDINGS: tuple[str, ...] = words_of(
    """ировать ениями ирован ениях ованн остей ованы ением ениям остью ируют ирует анием циями
    ении аний циях анию ение ании ости ание ения ению ован ания циям цией иями ость ений ием или
    ели яли уют цию ции ями его ело яло ила ций ять ому ите ему ами ция ете ого иях али еть ует
    ала ить яла ыми ела ишь ало ией уть ать ешь ими ило ие ый яя ут ая ию ям им ел ах ет ат ют ия
    ть ит ых ей ую ем ил ов ий ам ым ые ал их ое юю ев ее ой ят ом ял ях
    а у ю ы и о я е ь й"""
)
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


def hstem(token: str) -> str:
    """The header stemmer: `ru_light` for Cyrillic tokens, `en_light` otherwise."""
    return ru_light(token) if has_cyrillic(token) else en_light(token)


# --------------------------------------------------------------------------------------------
# The transliteration bridge's key (spec 02 §3.9)
# --------------------------------------------------------------------------------------------

_TRANSLIT: dict[str, str] = {
    "а": "a",
    "б": "b",
    "в": "v",
    "г": "g",
    "д": "d",
    "е": "e",
    "ё": "e",
    "э": "e",
    "ж": "zh",
    "з": "z",
    "и": "i",
    "й": "y",
    "к": "k",
    "л": "l",
    "м": "m",
    "н": "n",
    "о": "o",
    "п": "p",
    "р": "r",
    "с": "s",
    "т": "t",
    "у": "u",
    "ф": "f",
    "х": "h",
    "ц": "ts",
    "ч": "ch",
    "ш": "sh",
    "щ": "sch",
    "ы": "y",
    "ю": "yu",
    "я": "ya",
    "ъ": "",
    "ь": "",
}
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
