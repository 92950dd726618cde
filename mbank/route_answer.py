"""Whether anything in the bank answers a routed question: `bank_route`'s `answered` (issue 16).

The ranking (`mbank.route`) orders candidates; this module decides whether the best of them is
evidence of an answer or only the least bad of a bank that never covers the topic. It weighs
each content word of the question by how rare the *concept* is in this bank, then asks two
things of a candidate: how much of that weight it covers (`coverage`), and how much of it the
bank holds anywhere (`known`). A question about PagerDuty, Splunk or a cron schedule in a
CLI tool's bank reuses the bank's common words ("stage", "audit log", "snapshot"), but its
rarest words are nowhere, so `known` stays low however well the common words are covered.

What makes the weights general rather than fitted to a question set:

- **a concept is as rare as its most common form.** A word with dictionary translations is
  looked for in several forms (`task`, `задач`); one that never occurs (the Russian form in an
  English bank) says nothing about rarity. The idf is taken from the form most documents hold
  (the ranking's idf takes the rarest, which made "task" as rare as a word the bank never
  uses), and blended half and half with a flat weight (`FLAT_SHARE`).
- **only whole-word evidence.** The ranking also credits prefix pieces of header words
  (`data` for "datadog", `ci` for "шифрование"): useful for ordering, noise for deciding that
  the bank knows a word. With Snowball stems on both sides, morphology is already folded into
  the body forms, so a header match counts here only when it is the word or its translation.
- **function words carry no evidence.** Pronouns, auxiliaries and connectives the route
  tokeniser keeps (`myself`, `через`, `между`) are absent from most banks for no reason to do
  with the topic; `lang_data/stopwords.tsv` lists them under `en_function` / `ru_function`.
- **an everyday word is phrasing more than topic** (tenth pass): "try", "spot", "sitting" are
  rare in a bank but common in speech, so the idf half of their weight shrinks by their rank
  among spoken English's 5,000 most frequent words (`EVERYDAY_SHARE`), and a Russian word of
  `frequent.tsv` keeps half; a paraphrased question then leans on "vault" and "disable", the
  words the answer states.
- **an unknown name weighs three words** (`UNKNOWN_NAME_WEIGHT`): "PagerDuty", "Splunk", "cron"
  in a Russian sentence are what the question is about.
- **a Russian word the dictionary cannot translate, in an English bank,** weighs as much as
  the bank is written in Russian, and at least `UNTRANSLATED_FLOOR` of a word (fifth pass;
  nothing before): such a word could not have matched anything, but once the tables hold the
  everyday and chat words of a question, a word they lack is as often the topic the bank
  never covers (закупка, кухня, онбординг) as a gap in them. (Counting it in full was tried in
  the first wave and again in the fifth pass: it raised false alarms on Russian questions
  whose chat words the tables lack.)
- **a translation found only by stripping a verbal prefix is half the evidence**
  (`STRIPPED_CERTAINTY`, third pass): перезагрузка (reboot) is not загрузка (load).
- **a word the bank holds only through a translation is known only where a candidate holds it**
  (seventh pass): the translation is the dictionary's guess of the asker's sense, and the English
  word sitting in some other document (отпуск "vacation" in an HR note, процент "percent" in a
  changelog) says nothing about whether the bank answers. A word the asker typed as the bank
  writes it stays known wherever it is.
- **a transliteration guess is a quarter of the evidence** (`GUESS_CERTAINTY`; half in the
  first wave): the bridge makes тимлидом "toml" and лицензии "lets", which share letters, not
  a meaning.

A third question comes last: whether one paragraph of the candidate holds the evidence together
(`TOGETHER_MIN`, seventh pass). A question that borrows every word from the bank, around a topic
the bank never covers, has `known` near 1 and a long document covering most words, each in
another paragraph; an answer is stated in one place. The same share re-ranks the candidates
(`route.stated_together`, eighth pass). For the verdict the paragraph need hold only the
question's topic (eleventh pass): each word counts there by `topic_share`, so a long question's
everyday phrasing ("seems", "nobody", "simply") need not be in the paragraph that answers.

Pure functions of the concepts, their header matches and the index's figures.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from mbank.lang import EVIDENCE_STOP, has_cyrillic
from mbank.lexicon import everyday_ranks

if TYPE_CHECKING:
    from mbank.route import Figures, Match
    from mbank.route_concepts import Concept
    from mbank.search import SearchIndex

# `answered` is false when every listed candidate's `answer_strength` is below this.
# Calibrated on the development sets only (tests/route_quality: 68 questions without an answer,
# 100 with one): the flat part of the sweep is 0.58–0.64 for English (0.91 of the questions
# without an answer answered false, 0.04 false alarms) and 0.58–0.60 for Russian (0.88, no
# false alarm); see the CHANGELOG entry of issue 16's second wave. Re-swept in the third pass on
# the grown development set (88 without an answer): 0.58–0.62 stay flat, and weighing coverage
# more than `known` gained one Russian no-answer for one English false alarm, so both stay.
# Re-swept in the eighth pass, once the candidates are re-ranked by the share one paragraph states
# (`route.stated_together`), on the twelve older folders, now development sets (704 English and
# 754 Russian questions; their READMEs say so). The listed candidates are then the ones whose
# paragraphs hold the evidence, so the least strength must be a little higher: English no-answer
# 0.739 at 0.60, 0.750–0.753 from 0.62 to 0.64 (false alarms 0.083 -> 0.092), 0.758 at 0.67 for
# 0.101; 0.63 is the middle of the flat part.
ANSWER_MIN = 0.63
# the same for a question holding Cyrillic (eighth pass): it reaches an English bank through
# translations, each a guess of the sense, so the same share of evidence is a little less sure.
# Russian no-answer 0.737 at 0.60, 0.777 at 0.63, 0.782 at 0.64 and 0.65 (false alarms 0.050 ->
# 0.063 -> 0.071), 0.787 at 0.66 for 0.082. Re-swept in the tenth pass, with everyday words
# weighed as phrasing, on the twenty-two development folders (676 Russian questions without an
# answer, 678 with one): the eight newest (240 + 240, written with the strictest paraphrase rules)
# hold both of issue 16's targets at 0.63 (no-answer 0.754, false alarms 0.083) and not at 0.64
# (0.758 / 0.100); on all twenty-two 0.64 -> 0.63 moves 0.760 / 0.062 to 0.751 / 0.055. So the two
# languages share the least strength again; the constant stays, for a later calibration.
RUSSIAN_ANSWER_MIN = 0.63
# a concept the bank holds only through a transliteration guess is a quarter of the evidence
# (half in the first wave): реклама -> "reclaim", тимлидом -> "toml", вилка -> "walk" share a
# consonant skeleton, not a meaning
GUESS_CERTAINTY = 0.25
# a concept translated only after stripping a verbal prefix is half the evidence (issue 16, third
# pass): the prefix often changes the meaning (перезагрузка "reboot" is not загрузка "load",
# переживать "survive" is not жить "live"), so the translation is a likely sense, not a certain one
STRIPPED_CERTAINTY = 0.5
# a header match at least this strong is the word itself (1.0) or a translation (0.9), not a
# prefix piece (0.6 × discount)
WHOLE_WORD = 0.8
# a header match at least this strong is the word the asker typed, not a translation (0.9)
TYPED = 0.95
# A concept's weight is half a flat share (every content word counts) and half its idf in this
# bank: pure idf let one ordinary word the bank happens not to use ("halfway", "noticed")
# outweigh everything else a question says; a flat weight ignored that "provider" is in every
# document of a provider tool's bank.
FLAT_SHARE = 0.5
# An everyday English word (`lang_data/en_everyday.tsv`, spoken English's 5,000 most frequent) is
# the asker's phrasing more than the bank's topic: the idf half of its weight is this share for
# the first `EVERYDAY_FULL` of them, rising (in log rank) to the whole idf by the last (issue 16,
# tenth pass). Without it, "what result do I get if I try to disable an agent file and something is
# already sitting at its spot in the vault" weighed "try", "sitting" and "spot", rare in the bank,
# above "vault" and "disable", and the paragraph that answers (the vault-conflict row) held too
# little of the evidence. Swept on the eighteen development folders (536 English questions
# without an answer, 528 with one): 0.5 took English false alarms 0.106 -> 0.089 for no-answer
# 0.759 -> 0.752 (hit@1 0.655 -> 0.653); 0.25 gave 0.746 / 0.085 and 0 gave 0.735 / 0.070, the
# trade a threshold makes. The ranks 1,000 / 5,000 are not critical: 500 / 3,000 and 3,000 /
# 20,000 gave the same to 0.002, and ranking stems instead of words no better. A Russian word is
# everyday when its key is in `lang_data/frequent.tsv` (`Concept.everyday`; the most frequent
# Russian words the other tables lack), and keeps `EVERYDAY_SHARE` of its idf: Russian no-answer
# 0.759 -> 0.766 and false alarms 0.073 -> 0.066 on the same folders (0.25 gave 0.755 / 0.061,
# 0 gave 0.752 / 0.057, 0.75 the same as 0.5); doing the same for colloquial.tsv lost 0.011 of
# no-answer, and ranking the English translations moved each figure by under 0.01.
EVERYDAY_SHARE = 0.5
EVERYDAY_FULL = 1000
# a name the question uses (a capitalised word inside an English sentence, a Latin word in a
# Russian one) that the bank never mentions counts as this many ordinary words: the asker
# named the thing, and a bank that answers about it would name it too
UNKNOWN_NAME_WEIGHT = 3.0
# the least share of a word a Russian word that no table translates weighs in a bank not written
# in Russian (issue 16, fifth pass). Swept on the grown development set (0 to 1), Russian: 0.25
# to 0.75 is flat (0.89 of the questions without an answer answered false, 0.01 false alarms);
# 0 gave 0.86 / 0.01, 0.9 and 1 gave 0.91 / 0.04; 0.5 is the middle of the flat part. English
# questions do not reach the rule.
UNTRANSLATED_FLOOR = 0.5
# `answered` also needs one paragraph of a candidate to hold, with the candidate's header, at least
# this share of the evidence the bank holds (issue 16, seventh pass). A question that borrows the
# bank's words around a topic it never covers ("which flame graph shows where the workflow runner
# spends its time") finds each word somewhere, often all in one long document, but not together;
# an answer is stated in one place. Swept on both development sets (tests/route_quality and
# tests/route_quality_dev2; 84 + 104 questions without an answer, 70 + 100 with one, en + ru):
# 0.5 turned 5 English and 2 Russian questions without an answer false (0.68 -> 0.74, 0.79 ->
# 0.81) for 2 English false alarms (0.04 -> 0.07; Russian none); 0.55 cost 4 more English false
# alarms for 3 more no-answers. A whole `##` section as the unit gained 2 questions fewer in each
# language for one false alarm fewer. Re-swept in the eighth pass with the re-ranking, on the
# twelve development folders: 0.45 loses 0.03 of no-answer in each language, 0.55 doubles the
# English false alarms (0.092 -> 0.172); a share falling with the candidate's strength (0.65 at
# the least strength to 0.35 at 1), better before the re-ranking, was 0.02 below 0.5 after it.
# A line, 2-3 lines, a table row, or a paragraph with its heading as the unit were all below.
# Raised to 0.55 in the eleventh pass, when the verdict's paragraph test stopped counting
# everyday words (`topic_share`): a long question's phrasing ("seems", "nobody", "simply",
# "written", "keep going") no longer has to be in the paragraph that answers, so the share of what
# remains can be asked for a little more strictly. Swept on the twenty-six development folders
# (768 + 776 English and 798 + 796 Russian questions with / without an answer), English no-answer
# / false alarms: 0.50 gave 0.724 / 0.051, 0.53 0.733 / 0.068, 0.55 0.741 / 0.081, 0.58 0.749 /
# 0.094, 0.60 0.756 / 0.104 (the old test at 0.5: 0.742 / 0.102, and 0.726 / 0.081 at 0.47);
# Russian 0.763 / 0.059 at 0.55 (0.754 / 0.044 before). On the ten newest folders (300 + 300 per
# language) 0.55 gives English 0.743 / 0.100 where the old test gave 0.750 / 0.150, and no-answer
# stays 0.743 up to 0.58 while false alarms rise, so 0.55 is the knee.
TOGETHER_MIN = 0.55


class Evidence:
    """Per concept of one question: its weight, whether the bank holds it, its whole-word
    header stems and its body token lists, computed once and asked of each candidate."""

    def __init__(
        self,
        index: SearchIndex,
        fig: Figures,
        concepts: list[Concept],
        all_matches: list[dict[str, Match]],
        names: list[str],
        absent: frozenset[str] = frozenset(),
        listed: Collection[str] | None = None,
    ) -> None:
        self.index = index
        self.fig = fig
        self.forms = fig.forms
        n = fig.stats.n
        self.header: list[frozenset[str]] = []
        self.body: list[tuple[tuple[str, ...], ...]] = []
        self.weights: list[float] = []
        # the same without the everyday words' part, for the verdict's paragraph test
        self.topic_weights: list[float] = []
        self.known: list[bool] = []
        self.certainty: list[float] = []
        unseen = math.log(1 + (n + 0.5) / 0.5)
        share = index.cyrillic_share()
        named = {name.lower() for name in names}
        translated_only: list[int] = []
        for concept, matches in zip(concepts, all_matches, strict=True):
            whole = frozenset(word for word, match in matches.items() if match[0] >= WHOLE_WORD)
            df = max((len(fig.bm25(variant.form)[1]) for variant in concept.body), default=0)
            if df == 0 and whole:
                df = 1
            typed = any(match[0] >= TYPED for match in matches.values()) or any(
                fig.bm25(variant.form)[1] for variant in concept.body if variant.discount == 1.0
            )
            if df and not typed:
                translated_only.append(len(self.weights))
            if concept.literal in absent:
                # a word of a compound name the bank never writes (`route.unknown_compounds`)
                # is evidence the bank lacks, weighed as an ordinary word: the asker named a
                # thing, but its parts are words the bank uses
                df, whole = 0, frozenset()
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            everyday = EVERYDAY_SHARE if concept.everyday else everyday_share(concept.literal)
            weight = FLAT_SHARE * unseen + (1 - FLAT_SHARE) * idf * everyday
            if concept.literal in EVIDENCE_STOP:
                weight = 0.0
            elif df == 0 and concept.literal in named and concept.literal not in absent:
                weight *= UNKNOWN_NAME_WEIGHT
            elif df == 0 and len(concept.body) == 1 and has_cyrillic(concept.literal):
                weight *= max(share, UNTRANSLATED_FLOOR)
            self.certainty.append(
                GUESS_CERTAINTY
                if concept.guessed
                else STRIPPED_CERTAINTY
                if concept.stripped
                else 1.0
            )
            self.header.append(whole)
            self.body.append(tuple(self.forms.get(variant.form, ()) for variant in concept.body))
            self.weights.append(weight)
            self.topic_weights.append(weight * topic_share(everyday))
            self.known.append(df > 0)
        # every body token of each concept, for the paragraph test (`together`)
        self.body_tokens = [
            frozenset(token for tokens in body for token in tokens) for body in self.body
        ]
        self._in_header: dict[tuple[int, str], bool] = {}
        self._together: dict[tuple[str, bool], float] = {}
        # the concepts the bank holds only through a translation (known only where listed)
        self.translated_only = tuple(translated_only)
        self.total = sum(self.weights)
        self.relist(listed)

    def relist(self, listed: Collection[str] | None) -> None:
        """Count a concept the bank holds only through a translation as known only where one of
        `listed` holds it (anywhere when None), and what depends on that. `route` lists the
        re-ranked pool first, then the results it keeps; the weights stay as they are."""
        for position in self.translated_only:
            self.known[position] = listed is None or any(
                self.covers(position, path) for path in listed
            )
        held = sum(
            w * c for w, c, k in zip(self.weights, self.certainty, self.known, strict=True) if k
        )
        self.known_share = held / self.total if self.total else 0.0
        self._together.clear()

    def in_header(self, position: int, path: str) -> bool:
        """Whether a header field of document `path` holds concept `position` as a whole word."""
        key = (position, path)
        found = self._in_header.get(key)
        if found is None:
            found = self._in_header[key] = self._header_holds(position, path)
        return found

    def _header_holds(self, position: int, path: str) -> bool:
        header = self.index.docs[path].header
        whole = self.header[position]
        if whole:
            for field in (*header.keys, header.purpose, header.title, *header.sections):
                if any(word in whole for word in field.stems):
                    return True
        return False

    def covers(self, position: int, path: str) -> bool:
        """Whether document `path` holds concept `position` as a whole word (header or body)."""
        if self.in_header(position, path):
            return True
        postings = self.index.postings
        return any(
            postings.get(token, {}).get(path, 0) > 0
            for tokens in self.body[position]
            for token in tokens
        )

    def strength(self, path: str) -> float:
        """`answer_strength` of one candidate."""
        if not self.total:
            return 0.0
        covered = sum(
            weight * self.certainty[position]
            for position, weight in enumerate(self.weights)
            if weight and self.known[position] and self.covers(position, path)
        )
        return answer_strength(covered / self.total, self.known_share)

    def together(self, path: str) -> float:
        """The largest share of the evidence the bank holds that one paragraph of `path` holds,
        a concept in the candidate's header counting in every paragraph; the re-ranking's share
        (`route.stated_together`), asked of every candidate of the pool, so kept per path."""
        return self._kept_share(path, topic=False)

    def topic_together(self, path: str) -> float:
        """`together` with each word weighed by `topic_share` (issue 16, eleventh pass): the
        share the verdict asks `TOGETHER_MIN` of. An answer states the question's topic in one
        place, not its phrasing, so the everyday words of a long question ("the side task I
        opened in its own tab turns out to need a new feature package or an ADR change; can I
        just keep going in that session?") need not be in the paragraph that answers. When
        every word the bank holds is everyday, they are all the question has, and count."""
        return self._kept_share(path, topic=True)

    def _kept_share(self, path: str, topic: bool) -> float:
        key = (path, topic)
        found = self._together.get(key)
        if found is None:
            found = self._together_share(path, self.topic_weights if topic else self.weights)
            if found < 0:
                # the bank holds none of that weight: a question of everyday words only is
                # judged on them all, and one the bank holds nothing of has no share at all
                found = self._kept_share(path, topic=False) if topic else 0.0
            self._together[key] = found
        return found

    def _together_share(self, path: str, weights: list[float]) -> float:
        """The share itself, over `weights`; -1 when the bank holds none of their weight."""
        present = [
            position for position, weight in enumerate(weights) if weight and self.known[position]
        ]
        held = sum(weights[p] * self.certainty[p] for p in present)
        if not held:
            return -1.0
        headed = {p for p in present if self.in_header(p, path)}
        everywhere = sum(weights[p] * self.certainty[p] for p in headed)
        rest = [p for p in present if p not in headed]
        held_by = [(weights[p] * self.certainty[p], self.body_tokens[p]) for p in rest]
        best = 0.0
        for tokens in self.fig.paragraphs(path):
            share = sum(weight for weight, forms in held_by if not forms.isdisjoint(tokens))
            best = max(best, share)
        return (everywhere + best) / held


def everyday_share(word: str) -> float:
    """The share of its idf an English question word keeps as evidence: `EVERYDAY_SHARE` for
    the `EVERYDAY_FULL` most frequent everyday words, 1 for a word the table lacks, and in
    between a share rising with the log of the rank to 1 at the table's last word."""
    ranks = everyday_ranks()
    rank = ranks.get(word)
    if rank is None:
        return 1.0
    if rank < EVERYDAY_FULL:
        return EVERYDAY_SHARE
    rise = math.log(rank / EVERYDAY_FULL) / math.log(len(ranks) / EVERYDAY_FULL)
    return EVERYDAY_SHARE + (1 - EVERYDAY_SHARE) * rise


def topic_share(everyday: float) -> float:
    """The share of a word's evidence weight that counts in the verdict's paragraph test, from its
    everyday share (`everyday_share`, or `EVERYDAY_SHARE` for an everyday Russian word): none for
    the `EVERYDAY_FULL` most frequent English words and for a word of `frequent.tsv`, rising in
    log rank to all of it at the everyday table's last word, and all of it for a word the table
    lacks (issue 16, eleventh pass)."""
    return (everyday - EVERYDAY_SHARE) / (1 - EVERYDAY_SHARE)


def answer_strength(coverage: float, known: float) -> float:
    """How well one candidate's evidence answers the question, from 0 to 1 (issue 16).

    `coverage`: the share of the question's evidence weight the candidate covers; `known`: the
    share the bank holds anywhere. `known` weighs twice: on the development sets it separated
    the two kinds of question better than coverage did, since a question the bank cannot answer
    has its rarest words nowhere, while the common ones are covered somewhere.
    """
    return (coverage + 2 * known) / 3


def answer_min(question: str) -> float:
    """The least `answer_strength` of an answer to `question`: `RUSSIAN_ANSWER_MIN` when it holds
    Cyrillic, else `ANSWER_MIN`."""
    return RUSSIAN_ANSWER_MIN if has_cyrillic(question) else ANSWER_MIN


def mark_weak(
    evidence: Evidence, results: list[dict[str, Any]], all_weak: bool, least: float
) -> None:
    """Add `weak: true` to every result whose `answer_strength` is below `least` (`answer_min`),
    or whose best paragraph holds less than `TOGETHER_MIN` of the topic's evidence the bank holds
    (`Evidence.topic_together`); to every result when `all_weak` (the route already knows nothing
    answers)."""
    for item in results:
        path = item["path"]
        if (
            all_weak
            or evidence.strength(path) < least
            or evidence.topic_together(path) < TOGETHER_MIN
        ):
            item["weak"] = True
