"""The near-miss guard: a semantic candidate is served only if nothing in the two texts contradicts.

Sentence embeddings place "capital of Australia" and "capital of Austria" closer together than many
true paraphrases (measured on cache/data: at any threshold that keeps 90% of paraphrases, over half of
the near-misses would hit). So after the threshold, the guard compares what the two questions *pin
down*, with cheap deterministic checks (no model; p50 ~0.18 ms for a new pair on an AVX-512 CPU, ~0.11 ms
once both texts were analysed — the analysis is cached per text):

1. language    — both texts in the same language (stop-word fingerprint and script).
2. numbers     — the same multiset of numbers (digits, number words, ordinals, roman numerals, years),
                 the operands of a division, power or subtraction in the same order ("4/3" ≠ "3/4"),
                 and a written expression's operators ("2x + 5 = 15" ≠ "2x - 5 = 15").
3. negation    — both negated or both not.
4. poles       — no antonym facing its opposite (before/after, max/min, enable/disable, …).
5. question    — compatible question types (who ≠ when ≠ where ≠ why ≠ how many; "telephone inventor"
                 asks who, "titanic sinking date" when).
6. intent      — the wording asks for the same kind of answer: "How do I calculate EBITDA?" (a how-to) is
                 not "What is EBITDA?" (a definition), "How long should I brine a turkey?" (an amount)
                 not "How do I brine a turkey?", "What causes inflation?" not "define inflation",
                 "Explain the Bayeux Tapestry" (an overview) not "Who made it?"; and a request does the
                 same to a thing: "list S3 buckets" is not "create an S3 bucket".
7. form        — neither asks for a form of answer the other does not mention: a poem, a joke, a
                 summary, "with answers", "briefly", "in a table" (`lexicon.OUTPUT_FORMS`).
8. direction   — conversions and translations go the same way (miles→km ≠ km→miles), and the question
                 word keeps its role: "What do koalas eat?" (object) is not "What eats koalas?" (subject);
                 names written more often on each side have not traded places ("a Canadian in the US …
                 Canadian taxes" ≠ "a US citizen in Canada … US taxes"); the asker is the subject or the
                 object on both sides ("What should I get my wife?" ≠ "What should my wife get me?");
                 two countries keep their roles ("Americans … in Canada" ≠ "a Canadian … in the US"),
                 and so do an eater and a food ("Can cats eat dog food?" ≠ "Is cat food safe for dogs?").
   quoted      — quoted texts are the same, word for word, unless the question asks what they mean
                 ('spell "necessarily"' ≠ 'spell "necessary"'; hard, as 1–8).
9. terms       — every specific term of either text (anything that is not a function, phrasing or
                 light word, after spelling/abbreviation/synonym canonicalisation) appears in the other,
                 or a WordNet synonym of it does (`cache.synonyms`; "earth"/"world", "graph"/"chart").
                 Quoted words are always specific; units and languages need the word itself. Words
                 spelled like function words are terms where they name something: "the US", "in May",
                 "a will", "IT", single letters ("vitamin K"). Some words are read in their frame:
                 "eat" and "safe" say one thing when the eater and the food agree, an "intake" is what
                 a how-much question asks. A term the other text says another way is matched: a measure
                 its question asks ("marathon distance" = "How long is a marathon?"), a field named once
                 as a label ("… in physics"), the verb of "how X works", "appear" before what X is said
                 to be, an ordinal only in context the question does not point back to.
10. light swap — "largest *city*" vs "largest *country*": light words may be added, never swapped.

Checks 1–8 are hard vetoes. Every other pair goes to a small learned verifier (`verify`): the
gradient-boosted trees over pair features (`cache.verifier_model`, fitted on the train split and the
training probes, cuts chosen on dev and out of fold), or the fine-tuned cross-encoder
(`cache.cross_encoder`) when its model file `cache/model/cross_encoder.safetensors` is present. It may
refuse a pair 9–10 let through (a question the rules read as the same: "How do I copy files onto a
USB stick?" vs "… off a USB stick?") and, with an accept cut at or below 1, overturn a refusal
by 9–10 (a reworded word): the shipped trees serve such a pair at p >= 0.95. `verify_rules` is the rules alone.

The guard errs towards refusing: a refused paraphrase costs one upstream call, a wrong hit costs a
wrong answer. `verify(query, cached)` is symmetric in intent but reports the first failing check.

This module compares; reading a text is elsewhere: `cache.wording` (tokens, canonical forms, language),
`cache.numerals` (numbers), `cache.intents` (intent, forms, roles) and `cache.facts` (`analyse`: what a
text pins down, once per text). Word lists are in `cache.lexicon`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from cache import lexicon as lx
from cache import shapes, synonyms
from cache.facts import (AMOUNT_CONFLICTS, CONTRAST, COUNTRIES, LANGUAGE_NAMES, POLE_OF, TYPED, Facts, analyse,
                         countries_named)
from cache.intents import INTENT_CONFLICTS
from cache.shapes import shape_of
from cache.wording import (WORD, asked_part, asking_sentence, canonical, names_valence, phrased_tokens, surface,
                           tokenize, tokens_of)


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    reason: str | None = None  # the check that failed: language, numbers, negation, …
    detail: str | None = None

    def __bool__(self) -> bool:
        return self.ok

    @property
    def hard_veto(self) -> bool:
        """Refused by a check the learned stage may not overturn (anything but `SECOND_CHANCE`)."""
        return not self.ok and self.reason not in SECOND_CHANCE


def _near_form(term: str, words: frozenset[str]) -> bool:
    """Derivations the stemmer leaves apart (cloudy/cloud, pregnancy/pregnant, sunburnt/sunburn):
    a shared prefix of at least 5 letters covering 75% of the longer word. Compounds (heart/heartburn)
    and look-alike names (austria/australia) stay apart."""
    if len(term) < 5:
        return False
    for word in words:
        if len(word) < 5 or word[:5] != term[:5]:
            continue
        common = 5
        limit = min(len(word), len(term))
        while common < limit and word[common] == term[common]:
            common += 1
        if common >= 0.75 * max(len(word), len(term)):
            return True
    return False


def _common_words(text: str, canon_terms) -> dict[str, tuple[str, bool]]:
    """canonical term → (written word, written capitalised), for the terms WordNet may speak for: single
    words, not units, languages or the lexicon's multi-word canonical forms ('new_york')."""
    written, capitalised = surface(text)
    out = {}
    for term in canon_terms:
        word = written.get(term)
        if (word and word.isalpha() and word.isascii() and term not in TYPED and "_" not in term
                and not names_valence(word)):
            out[term] = (word, word in capitalised)
    return out


@lru_cache(maxsize=65536)
def _synonym_candidates(text: str) -> tuple[tuple[str, bool], ...]:
    """The words of `text` that may be a WordNet synonym of a term the other text has."""
    facts = analyse(text)
    return tuple(_common_words(text, facts.terms | facts.light).values())


def _synonym_found(term: str, text: str, other: str) -> bool:
    """Does `other` hold a WordNet synonym of `term` (a term of `text` that `other` lacks)? Where either text
    is a comparison, only a synonym in the first sense of both: near-synonyms are what a comparison tells
    apart ("effect vs impact" is not "affect vs effect", though WordNet lists "impact" under "affect")."""
    word = _common_words(text, (term,)).get(term)
    if word is None:
        return False
    strict = "comparison" in (analyse(text).intent, analyse(other).intent)
    return any(synonyms.synonymous(word[0], candidate, word[1], name, strict)
               for candidate, name in _synonym_candidates(other))


@lru_cache(maxsize=65536)
def _compounds(text: str) -> tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]]]:
    """(the words as written, every two neighbours joined, each word → the joins it is part of): "time
    zone" makes "timezone", "vs code" "vscode", so either spelling of a compound finds the other."""
    raw = phrased_tokens(text)[0]
    joins: dict[str, set[str]] = {}
    for left, right in zip(raw, raw[1:]):
        if left.isalpha() and right.isalpha() and len(left) + len(right) >= 5:
            joins.setdefault(left, set()).add(left + right)
            joins.setdefault(right, set()).add(left + right)
    return (frozenset(raw), frozenset(j for made in joins.values() for j in made),
            {word: frozenset(made) for word, made in joins.items()})


def _compound_found(term: str, text: str, other: str) -> bool:
    """Is `term` (of `text`, lacking in `other`) a compound `other` writes as two words, or one half of a
    compound `other` writes as one ("timezone" / "time zone")?"""
    word = surface(text)[0].get(term)
    if word is None:
        return False
    other_words, other_joins, _ = _compounds(other)
    return word in other_joins or bool(_compounds(text)[2].get(word, frozenset()) & other_words)


def _lacking(text: str, other: str, with_synonyms: bool) -> list[str]:
    a, b = analyse(text), analyse(other)
    return sorted(t for t in a.terms - b.words if not _near_form(t, b.words) and not _compound_found(t, text, other)
                  and not (with_synonyms and _synonym_found(t, text, other)))


def unmatched_terms(query: str, cached: str, *, with_synonyms: bool = True) -> tuple[list[str], list[str]]:
    """The specific terms of each text that the other lacks: not there in any form, nor (with_synonyms)
    as a WordNet synonym. The `terms` check; the learned verifier's features use it without synonyms."""
    return _lacking(query, cached, with_synonyms), _lacking(cached, query, with_synonyms)


def clear_text_caches() -> None:
    """Forget every per-text analysis, the learned verifier's too (for measuring the guard on texts it
    has not seen)."""
    from cache.verifier_model import WordVectors

    for cached in (tokens_of, phrased_tokens, analyse, shape_of, surface, synonyms._senses, _synonym_candidates,
                   _compounds, _names, shapes._around, _asker_context):
        cached.cache_clear()
    WordVectors.forget_texts()


def prepare(text: str, *, learned: bool = True) -> None:
    """Read `text` now as the guard reads a side of a pair (every per-text analysis, into the bounded
    caches above), so a later comparison with it starts warm. The service calls it when it stores an
    entry: a hit on that entry then reads only the query cold (~0.5 ms per text on a 2-core CPU).
    `learned`: the learned stage will compare it too (its per-text part is read as well)."""
    analyse(text)
    shape_of(text)
    _synonym_candidates(text)
    _compounds(text)
    _names(text)
    _asker_context(text)
    model = learned_model() if learned else None
    if model is not None and hasattr(model, "prepare"):
        model.prepare(text)


# verbs that take a thing from one form or place to another (canonical forms: "switch" reads as "turn")
_MOVING = frozenset(canonical(w) for w in "convert switch migrate move transfer upgrade".split())

SECOND_CHANCE = frozenset({"terms", "light"})
"""Checks whose refusal the learned verifier may overturn; every other check is a hard veto."""


def verify(query: str, cached: str) -> Verdict:
    """May the answer cached for `cached` be served for `query`? The rules first: their hard vetoes
    (language, numbers, negation, poles, question, intent, form, direction) are final. Every other pair is decided by
    the learned model (`learned_model()`): a pair the rules pass is served only at p >= its `veto_cut`,
    a pair they refuse for unmatched words (`terms`, `light`) only at p >= its `threshold`. Without a
    loadable model the rules decide alone."""
    verdict = verify_rules(query, cached)
    if verdict.hard_veto:
        return verdict
    model = learned_model()
    if model is None or (not verdict.ok and model.threshold > 1.0):  # a cut above 1 never serves: skip it
        return verdict
    p = model.prob(query, cached, rules_ok=verdict.ok)
    if verdict.ok:
        if p >= model.veto_cut:
            return verdict
        return Verdict(False, "model", f"rules pass; model p={p:.3f} < {model.veto_cut}")
    if p >= model.threshold:
        return Verdict(True, None, f"model p={p:.3f} ({verdict.detail})")
    return Verdict(False, verdict.reason, f"{verdict.detail}; model p={p:.3f}")


@lru_cache(maxsize=4)
def _present(path) -> bool:
    """Whether a model file exists, asked once per path (not a file-system call per candidate)."""
    return path.exists()


def learned_model():
    """The learned stage: the cross-encoder if its file is there and loads, else the trees; None if
    neither loads. Either has `prob(query, cached, rules_ok=...) -> p`, `threshold` (serve a pair the rules
    refused for unmatched words) and `veto_cut` (refuse a pair the rules passed)."""
    from cache import cross_encoder, verifier_model

    if _present(cross_encoder.MODEL_PATH):
        model = cross_encoder.shared_model()
        if model is not None:
            return model
    return verifier_model.shared_model()


def _named_light(a: Facts, b: Facts) -> frozenset[str]:
    """`a`'s light words less the person word a who-question implies, when both texts ask "who" and `b`
    names no person: "Who is the *author* of Harry Potter?" adds nothing to "Who wrote the Harry Potter
    *books*?", but "Who was the first *woman* in space?" still swaps a word of "… the first *man* …"."""
    if {a.intent, b.intent} <= {"person", "who-is"} and not (b.light & lx.PERSON_LIGHT):  # both ask "who"
        return a.light - lx.PERSON_LIGHT
    return a.light


@lru_cache(maxsize=65536)
def _names(text: str) -> frozenset[str]:
    """The canonical terms `text` writes as names (capitalised mid-sentence, or in capitals: 'Canada', 'US')."""
    names = set()
    for match in WORD.finditer(text):
        word, before = match.group(0), text[:match.start()].rstrip()
        if word[:1].isupper() and word != "I" and before and before[-1] not in ".!?:":  # not a sentence's start
            names.update(canonical(t) for t in tokenize(word))
    return frozenset(names)


# words that offer two poles as alternatives rather than in an order ("buy or sell", "from start to end")
_ALTERNATIVES = frozenset(("or", "and", "vs", "versus", "nor", "v", "/", "between", "from", "to", "than", "compared"))


def _pole_order(text: str, word: str, opposite: str) -> bool | None:
    """Does pole `word` come before `opposite` in the text, None if they are offered as alternatives ("buy or
    sell", "import vs export", "the difference between …") or not both written as words of their own (a
    phrase read as a pole: "turn on"), or reordered by a possessive ("G major's relative minor" = "the
    relative minor of G major")?"""
    shape = shape_of(text)
    canon = shape.canon
    if (word not in canon or opposite not in canon or "between" in canon or "differ" in canon
            or (shape.reorders and not shape.contracted)):
        return None
    i, j = canon.index(word), canon.index(opposite)
    if _ALTERNATIVES & set(canon[min(i, j) + 1:max(i, j)]):
        return None
    return i < j


def _unwritten_products(operators: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(op for op in operators if op != "*")


def _in_words_of(pairs: frozenset[tuple[str, str]], other: frozenset[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    """`pairs` with each word written as `other` writes it where the stemmer left two inflections apart
    ("breastfeeding" / "breastfeed" stem differently; the terms check matches them by `_near_form`)."""
    words = frozenset(w for pair in other for w in pair)
    if not pairs or not words:
        return pairs

    def as_other(word: str) -> str:
        if word in words:
            return word
        return next((w for w in sorted(words) if _near_form(word, frozenset((w,)))), word)

    return frozenset((as_other(left), as_other(right)) for left, right in pairs)


# The asker's context: who asks (family, school, work), for what (homework, a test in a subject) and how
# they feel about it; a question about the asker's own situation names other things (pregnant, a country,
# an age, a drug), which stay terms
_ASKER_CONTEXT = frozenset(canonical(w) for w in """
son sons daughter daughters kid kids child children boy girl brother sister mom mum dad father mother parent
parents wife husband partner boyfriend girlfriend friend friends buddy mate cousin cousins grandma grandpa
aunt uncle niece nephew teenager teen student pupil classmate teacher tutor professor boss colleague
coworker roommate neighbor neighbour family
homework assignment worksheet test exam quiz revision revising revise studying study course lesson class
ask asked asking wonder wondering confused stuck forget forgot remember curious argue arguing argument debate
bet settle help helping check learn learning trying try tomorrow tonight today yesterday week weekend always
again keep lol sure certain know knew idea understand explain explained tell told say said
mention mentioned read reading heard hear think thought watch watched watching saw noticed notice came come plan plans
planning planned weird start started starting begin began bought buy
history chemistry biology physics maths math science economics geography english gcse sat act ap bio
stats statistics mix mixing mixed
""".split())


_LABEL_FILLERS = frozenset("a an the".split())  # "in a Linux shell" (and single letters: "in C programming")


_SAYING = frozenset("say saying said translate translated translating translation write spell".split())
_SAID_LEADS = frozenset("the a an word words phrase expression sentence term".split())
_OPENINGS = frozenset("how what who which when where why whats can could do does is are should would will".split())


@lru_cache(maxsize=65536)
def _said_in(text: str) -> tuple[str, ...]:
    """The words a text asks to have said in another language, as written (their tense and number are what is
    translated): "How do you say 'I miss you' in Spanish?", "translate good night into French", "i miss you in
    spanish". Empty when the text asks no such thing."""
    tokens = tokenize(text)
    end = next((i for i in range(len(tokens) - 1, 0, -1)
                if tokens[i] in LANGUAGE_NAMES and tokens[i - 1] in ("in", "into", "to")), None)
    if end is None:
        return ()
    end -= 1
    start = next((i + 1 for i in range(end - 1, -1, -1) if tokens[i] in _SAYING), None)
    if start is None:
        if not tokens or tokens[0] in _OPENINGS:
            return ()
        start = 0
    if "from" in tokens[start:end]:
        end = start + tokens[start:end].index("from")
    while start < end and tokens[start] in _SAID_LEADS:
        start += 1
    return tuple(" ".join(tokens[start:end]).replace("thank you", "thanks").split())


# what the asker does not know, remember or was not told, in a sentence of context: no negation of the question
_UNSURE = re.compile(r"\b(?:not\s+(?:sure|certain)|no\s+idea|(?:don'?t|do\s+not|didn'?t|did\s+not|can'?t|cannot|"
                     r"couldn'?t|never)\s+(?:really\s+)?(?:know|knew|remember|understand|explain\w*|say|said|tell|"
                     r"told|mention\w*|figure(?:d)?\s+out))\b", re.I)


@lru_cache(maxsize=65536)
def _unsure_negated(text: str) -> bool:
    """Whether a text negates anything once what its asker is unsure of is set aside, in sentences of context before
    the question ("I get headaches and I'm not sure whether they're migraines. How are the two different?" negates
    nothing; "I don't know my ring size. How can I measure it?" neither; a question that says it still does)."""
    if not _UNSURE.search(text):  # (most texts: one search decides)
        return analyse(text).negated
    sentences, asking = asking_sentence(text)
    if asking == 0:
        return analyse(text).negated
    context = " ".join(_UNSURE.sub(" ", s) for s in sentences[:asking])
    return analyse(f"{context} {' '.join(sentences[asking:])}").negated


def _asked_ordinals(text: str) -> tuple[int, ...]:
    """The ordinals of the sentence that asks, when full sentences of context come before it and the
    question does not point back into them: "My daughter just finished the first Harry Potter book. How
    many are in the whole series?" asks no ordinal ("I just watched the first Alien. Who directed it?" does)."""
    ordinals = analyse(asked_part(text)).ordinals
    if 1 in ordinals and _FIRST_ORIGIN.search(text):  # "Who first discovered penicillin?" = "Who discovered …?"
        kept = list(ordinals)
        kept.remove(1)
        return tuple(kept)
    return ordinals


# "first" before the verb of a thing's origin asks when or by whom it came about, as the verb alone does
_FIRST_ORIGIN = re.compile(r"\bfirst\s+(?:discover|invent|creat|found|coin|develop|introduc|publish|releas|use|"
                           r"built|made|propos|describ|identif|isolat|synthesi|patent)\w*", re.I)


@lru_cache(maxsize=65536)
def _asker_context(text: str) -> frozenset[str]:
    """Terms written only in the sentences before the question that say who asks and why ("My son has a
    test tomorrow. When did WW1 start?", "My daughter's chemistry homework: …"): they change no answer.
    None when the question itself points back to someone in them ("My son is 8. Can I give him aspirin?")."""
    sentences, asking = asking_sentence(text)
    if asking == 0:
        return frozenset()
    question = tokenize(sentences[asking])
    if lx.BACK_REFERENCES & set(question):
        return frozenset()
    asked = {canonical(t) for t in question}
    before = {canonical(t) for s in sentences[:asking] for t in tokenize(s)}
    return frozenset((before - asked) & _ASKER_CONTEXT)


def _beyond_context(unmatched: list[str], text: str) -> list[str]:
    if not unmatched:
        return unmatched
    context = _asker_context(text)
    return [t for t in unmatched if t not in context] if context else unmatched


_DEICTIC = frozenset(("here", "there"))
_AMOUNT_LIGHT = frozenset(canonical(w) for w in "number count amount total quantity value figure level".split())
_SPANS = frozenset(canonical(w) for w in "second minute hour day week month year decade century".split())
# which way a safety question leans: "Which foods are safe for dogs?" and "Which foods are dangerous for dogs?"
# name other foods, though "safe" and "dangerous" share a canonical word ("Is chocolate safe for dogs?" =
# "Is chocolate toxic to dogs?": one answer to a yes or no)
_SAFE_SIDE = re.compile(r"\b(?:safe|safely|edible|harmless|non-?toxic|non-?poisonous)\b", re.I)
_UNSAFE_SIDE = re.compile(r"\b(?:unsafe|dangerous|danger|harmful|risky|(?<!non-)(?<!non)toxic|"
                          r"(?<!non-)(?<!non)poisonous|poison|deadly|lethal)\b", re.I)
_MEANING = re.compile(r"\b(?:mean|means|meant|meaning|define|definition)\b", re.I)
# a pick of one kind of thing (against what a thing means): "In which book did Descartes write …?" (not "which
# of", "which one")
_PICK = re.compile(r"\bwhich\s+(?!(?:of|one|ones|is|are|was|were|do|does|did|can|should|would|will|has|have)\b)[a-z]",
                   re.I)
_EATING = frozenset({canonical("eat"), canonical("safe")})
_INTAKE = frozenset(canonical(w) for w in ("intake", "consumption"))
_TAKING = frozenset(canonical(w) for w in "drink eat have take consume".split())
_TAKE = canonical("take")
_MULTIPLY = canonical("multiply")  # "x^2 * sin(x)" = "x^2 sin x": a product written or not
# "the human body" is the human, and "the body" a human's: "bones in the adult human body" = "How many bones
# does a grown human have?", "normal body temperature" = "normal human body temperature"; a skeleton too
_BODY = frozenset(canonical(w) for w in "body human skeleton person".split())
# a speed asked of a thing that moves: "How fast does light travel?" = "What is the speed of light?"
_MOTION = frozenset(canonical(w) for w in """travel travels traveling travelling move moves moving run runs running
go goes going""".split())
_SPEED = frozenset(canonical(w) for w in "speed fast fastest quickest velocity".split())
# a formula is how a thing is calculated: "circle area formula" = "How do you calculate the area of a circle?"
_FORMULA = canonical("formula")
_CALCULATING = frozenset(canonical(w) for w in "calculate calculated calculating calculation compute computed".split())
_SIMILARITY = re.compile(r"\b(?:in\s+common|similarit(?:y|ies)|alike)\b", re.I)
_DIFFERING = lx.COMPARISON_WORDS - {"same"}  # "in the same vein as" compares nothing
# cooking said by its method: "What's the microwave cooking time for a potato?" = "How long do I microwave …?"
_COOK = canonical("cook")
_REST = canonical("rest")
_REST_AFTER_COOKING = re.compile(r"\brest\w*\b.*\bafter\s+(?:\w+\s+)?cook", re.I)
_BY_FORMULA = re.compile(r"\b(?:using|with|by|via|without|in)\s+(?:a|an|the)?\s*formulas?\b", re.I)
_SPREADSHEETS = frozenset(canonical(w) for w in ("excel", "sheets", "spreadsheet", "spreadsheets"))
_CONVERT = canonical("convert")
_VISAS = frozenset(canonical(w) for w in ("visa", "visas", "esta", "evisa"))
_COOKING_METHODS = frozenset(canonical(w) for w in "boil boiled boiling bake baked baking fry fried frying roast "
                             "roasted roasting grill grilled grilling microwave microwaved microwaving steam steamed "
                             "steaming poach poached simmer stovetop".split())
_WEIGH = canonical("weigh")
_WEIGHT_UNITS = frozenset(canonical(w) for w in "gram grams kg kilogram kilograms kilo kilos pound pounds lb lbs ounce "
                          "ounces oz stone ton tons tonne tonnes milligram milligrams mg".split())
# a tool named or left to the words only it uses: git (commit, rebase, stash), SQL (a join, a select)
_DOMAIN_OF = {canonical("git"): frozenset(canonical(w) for w in "commit commits rebase stash checkout".split()),
              canonical("sql"): frozenset(canonical(w) for w in "join joins select query queries".split())}
# what a regex does, said or not where both name the regex: "non greedy regex" = "How do I make a regex match
# non-greedy?" (an SQL query, an Excel formula, an HTTP status code were tried: each passed near-misses)
_REGEX, _MATCH = canonical("regex"), canonical("match")
_SWAPPED_ALIKE = frozenset(frozenset((canonical(a), canonical(b))) for a, b in lx.SWAPPED_ALIKE)
# what a thing is for, against "What does X do?": "pancreas function" = "What does the pancreas do?"
_FUNCTION_NOUNS = frozenset(canonical(w) for w in "function functions purpose role job".split())
# a body's orbit is implied by the body: "Name the planet that orbits nearest the sun" = "Which planet is closest
# to the sun?", "How many moons orbit the Earth?" = "How many moons does Earth have?"
_ORBIT = canonical("orbit")
_ORBITING = frozenset(canonical(w) for w in "planet planets moon moons satellite satellites asteroid comet".split())
# energy in food is counted in calories: "How much energy, in calories, does a banana have?" = "banana calories"
_ENERGY = canonical("energy")
_ENERGY_UNITS = frozenset(canonical(w) for w in "calorie calories kcal kilocalorie kilocalories kilojoule kj".split())
# the language of a country is the one spoken there: "Which language is spoken in Brazil?" = "brazil language"
_SPOKEN = frozenset(canonical(w) for w in "spoken speak speaks".split())
_LANGUAGE = canonical("language")
# what is required is what one needs or must do: "daily protein requirement" = "How much protein do I need per
# day?", "Is a visa required for Japan?" = "Do I need a visa for Japan?"
_REQUIRED = canonical("required")
_NEEDING = re.compile(r"\b(?:need|needs|needed|must|have to|has to|mandatory)\b", re.I)
# the least one may have is what one needs: "minimum credit score for an FHA loan" = "What credit score do I
# need to get an FHA loan?", "minimum age to rent a car" = "How old do I need to be to rent a car?"
_MIN = canonical("min")
# the signs of a thing are how one tells it: "What are the signs of dehydration?" = "How can I tell if I'm
# dehydrated?", "signs your dog loves you" = "How do I tell if my dog loves me?"
_SIGNS = canonical("symptom")
# a drug is taken: "Is daily ibuprofen use safe?" = "Is it okay to take ibuprofen every day?"
_DRUGS = frozenset(canonical(w) for w in """ibuprofen acetaminophen aspirin naproxen diphenhydramine melatonin
amoxicillin antibiotic antibiotics medication medications medicine medicines pill pills supplement supplements
vitamin vitamins creatine antihistamine antihistamines magnesium zinc iron calcium potassium probiotic probiotics
multivitamin multivitamins tylenol advil motrin aleve benadryl zyrtec claritin paracetamol prednisone metformin
metronidazole simvastatin statin statins sertraline ssri ssris antidepressant antidepressants painkiller painkillers
biotin collagen turmeric ashwagandha""".split())
# a drug's dose is how much of it is taken: "adult daily vitamin d dose" = "How much vitamin D should an adult take
# daily?" (only where both name the drug and the taking side asks how much, or the most)
_DOSE = canonical("dose")
_MOST = frozenset(canonical(w) for w in ("most", "max", "maximum"))
# what is safe to eat or drink is safe: "leftover chicken fridge days safe" = "… safe to eat from the fridge"
_CONSUMING = frozenset(canonical(w) for w in ("eat", "drink"))
_SAFE = canonical("safe")
# a tax is paid on what is taxed: "Is Bitcoin taxable?" = "Do I have to pay taxes on Bitcoin?" (not "pay my
# taxes with Bitcoin", nor the price before tax)
_COST = canonical("cost")
_TAXES = frozenset(canonical(w) for w in ("tax", "taxes", "taxed", "taxable", "taxation"))
_PAYING_TAX = re.compile(r"\bpa(?:y|ys|ying|id)\s+(?:any\s+|the\s+)?(?:income\s+|capital\s+gains\s+)?tax(?:es)?\s+on\b",
                         re.I)
# sleep is counted in hours a night: "How much should a teenager sleep each night?" = "How many hours of sleep
# does a teenager need?"
_SLEEP = frozenset(canonical(w) for w in ("sleep", "sleeping", "slept"))
_SLEEP_COUNTS = frozenset(canonical(w) for w in ("hour", "hours", "night", "nights"))
# the difference between two things is how to tell them apart: "How can you tell a crocodile from an
# alligator?", "When do I use ser and when estar?"; how often is how many times a day (week, …)
_DIFFER, _OFTEN = canonical("differ"), canonical("often")
_TELL_APART = re.compile(r"\btell\s+(?:(?:a|an|the)\s+)?\w+(?:\s+\w+)?\s+(?:from|apart)\b|\bwhen\b.+\band when\b", re.I)
_TIMES_A = re.compile(r"\bhow many times (?:a|an|per|each) (?:day|week|month|year)\b", re.I)
# English is the language a question is asked in: "What are the rules for using a semicolon in English?" =
# "When should I use a semicolon?" (not against another language named)
_ENGLISH = canonical("english")
_IN_ENGLISH = re.compile(r"\bin english\s*[?.!]*\s*$", re.I)
# a word's English, a book's English edition
_NOT_ASKED_IN_ENGLISH = re.compile(r"\b(?:mean|means|meaning|translat\w*|say|called|publish\w*|releas\w*|print\w*|"
                                   r"written|wrote|dubbed)\b", re.I)
_LANGUAGE_NAMES = frozenset(canonical(w) for w in LANGUAGE_NAMES)
# the verb a duration question is asked with, against a text that asks the duration in other words: "How long
# does mod podge take to dry?" = "mod podge drying time" (not against how long a thing is, "How long is the movie
# Titanic?", nor how long it lasts: "How long does a thawed turkey last?" ≠ "turkey thawing time")
_TAKE_TIME = canonical("take")
_HOW_LONG_TAKE = re.compile(r"\bhow long (?:do|does|did|will|would|should|can|could|might)\b(?:\s+[\w'’-]+){1,6}?\s+"
                            r"(?:take|takes)\b", re.I)
_HOW_LONG_LEADS = "do|does|did|will|would|should|can|could|might|to|until|before|after"  # "how long does …", "… to …"
_ASKS_DURATION = re.compile(r"\bhow long (?:" + _HOW_LONG_LEADS + r")\b|"
                            r"\bhow many (?:seconds|minutes|hours|days|weeks|months|years)\b|"
                            r"\b(?:time|duration)\b", re.I)
# what a thing turns is the colour it becomes: "Why are my pothos leaves turning yellow?" = "pothos yellow leaves"
_TURN = canonical("turn")
_TURNING_COLOUR = re.compile(r"\bturn(?:s|ed|ing)?\s+(yellow|brown|black|white|red|pale|grey|gray|green|blue|"
                             r"purple|pink|orange)\b", re.I)
# a setting asked as the temperature a thing should be: "What temperature should my fridge be set to?" = "ideal
# fridge temperature", "What temp should I set my refrigerator to?" = "… should my fridge be"
_SET = canonical("set")
_SET_TO = re.compile(r"\bset\s+(?:(?:my|the|your|a|an|our)\s+)?(?:\w+\s+){0,2}(?:to|at)\b|\bbe\s+set\b", re.I)
_ASKS_TEMPERATURE = re.compile(r"\b(?:temperature|temp|how (?:cold|hot|warm))\b", re.I)
# giving an animal or a baby a food asks whether it may eat it: "Is it ok to give my dog grapes?" = "Can dogs eat
# grapes?"
_EAT = canonical("eat")
_GIVING_TO = re.compile(r"\b(?:give|feed|giving|feeding)\s+(?:(?:my|a|your|our|the)\s+)?(?:\w+\s+)?(?:dogs?|cats?|"
                        r"puppy|puppies|kittens?|rabbits?|bunny|hamsters?|guinea pigs?|parrots?|birds?|chickens?|"
                        r"horses?|babies|baby|toddlers?|infants?)\b", re.I)
# travelling to a place the other text names for the same question: "Do I need a visa to travel to Japan?" = "do i
# need a visa for japan" (another verb on the other side stays unmatched: "… to work in Japan?"; not with an origin:
# "Do I need a visa to travel to the US from Japan?" ≠ "japan visa for us citizens")
_TRAVEL = canonical("travel")
_TRAVELLING_TO = re.compile(r"\btravel(?:s|ed|led|ing|ling)?\s+(?:to|in|within|around|into)\b", re.I)
# how long a thing lives: "golden retriever lifespan" = "How long do golden retrievers live?"
_LIFESPAN, _LIVE = canonical("lifespan"), canonical("live")
_LIFE_VERBS = frozenset((_LIVE, canonical("last")))  # "car battery lifespan" = "How long does a car battery last?"


_ASKS_HOW_LONG = re.compile(r"\bhow long (?:" + _HOW_LONG_LEADS + r"|till|til)\b", re.I)
_DURATION_WORDS = frozenset(canonical(w) for w in """time times duration long length period timeline timeframe take
takes second seconds minute minutes min mins hour hours hr hrs day days week weeks month months year years yr yrs
decade decades until till til age old lifespan life live last valid validity expire expiry expiration""".split())


_FIELDS = frozenset(lx.FIELDS)


@lru_cache(maxsize=65536)
def _field_labels(text: str) -> frozenset[str]:
    """The fields a text files its question under, written as a label: after "in" ("What does galaxy mean in
    astronomy?", "in a Linux shell", "in C programming") or first or last in a keyword query ("recursion
    meaning programming", "sql union vs union all"). Not an adjective ("economic causes") nor a noun that
    modifies ("math riddles", "3 statistics about uniforms")."""
    tokens = tokenize(text)
    keyword = "?" not in text and bool(tokens) and tokens[0] not in lx.QUESTION_WORDS
    labels = set()
    for i, tok in enumerate(tokens):
        if tok not in _FIELDS:
            continue
        after_in = "in" in tokens[max(0, i - 3):i] and all(t in _LABEL_FILLERS or len(t) == 1
                                                             for t in tokens[tokens.index("in", max(0, i - 3)) + 1:i])
        if after_in or keyword and i in (0, len(tokens) - 1):
            labels.add(canonical(tok))
    return frozenset(labels)


def _beyond_field(unmatched: list[str], text: str) -> list[str]:
    labels = _field_labels(text) if unmatched else frozenset()
    return [t for t in unmatched if t not in labels] if labels else unmatched


# "How does a hash map work?" asks for the account "hashmap internals explained" gives: the verb is the question's
# shape, not a term (not "how long does it take to work", "how do I work out …")
_HOW_IT_WORKS = re.compile(r"\bhow\s+(?!(?:" + "|".join(sorted(lx.HOW_ADJECTIVES)) + r")\b)"
                           r"(?:[^\W_]+\s+){1,8}?works?\b(?!\s+out\b)", re.I)
_WORK = canonical("work")


def _beyond_how_it_works(unmatched: list[str], text: str) -> list[str]:
    if _WORK in unmatched and _HOW_IT_WORKS.search(text):
        return [t for t in unmatched if t != _WORK]
    return unmatched


# What an amount question measures, as its wording says: a duration ("how long does it take", "how many
# minutes"), a length ("how far", "how long is", "how many miles") or a speed ("how fast", "in km/h")
_LENGTH_UNITS = r"(?:miles?|mi|km|kms|kilomet(?:er|re)s?|met(?:er|re)s?|feet|foot|ft|yards?|inch(?:es)?|laps?)"
_TIME_UNITS = r"(?:minutes?|mins?|hours?|hrs?|seconds?|secs?)"
# what lasts rather than stretches: "How long is the flight from London to New York?" asks a duration
_LASTING = (r"(?:flight|flights|drive|trip|ride|journey|commute|wait|layover|movie|film|show|episode|warranty|trial|"
            r"lecture|class|shift|break|lunch|game|match|season|course|program|programme|pregnancy|semester|term)")
# a thing's own length, asked as how long it should be: "How long should a cover letter be?"
_LONG_BE_REST = r"(?:should|must|can|does|do|is|are) (?:a|an|the|my|your|his|her|their) (?:\w+ ){0,2}be\b"
_LONG_BE = r"how long " + _LONG_BE_REST
_MEASURES = (
    ("duration", re.compile(r"\bhow long (?!" + _LONG_BE_REST + r")(?:do|does|did|will|would|should|can|to|until|"
                            r"before|after|must|i|you)\b|\bhow many " + _TIME_UNITS + r"\b|\bhow long (?:is|was|are|were) "
                            r"(?:(?:a|an|the|my|your)\s+)?(?:\w+\s+){0,2}" + _LASTING + r"\b", re.I)),
    ("length", re.compile(r"\bhow far\b|\bhow long (?:is|was|are|were)\b(?! (?:(?:a|an|the|my|your)\s+)?(?:\w+\s+){0,2}"
                          + _LASTING + r"\b)|\b" + _LONG_BE + r"|\bhow many " + _LENGTH_UNITS + r"\b|"
                          r"\bis how (?:long|many " + _LENGTH_UNITS + r")\b|\b" + _LENGTH_UNITS + r" is an?\b", re.I)),
    # (not a sum: "how much is 3 items at $10 each")
    ("price", re.compile(r"^\D*\bhow much (?:is|are|was|were|does|do|did|will|would)\b"
                         r"(?!.*\b(?:weigh\w*|hold\w*|sleep\w*)\b)\D*$", re.I)),
    ("speed", re.compile(r"\bhow fast\b|\b(?:mph|kph|kmh|km/h|m/s|knots?|miles per hour|kilomet(?:er|re)s per hour|"
                         r"met(?:er|re)s per second)\b", re.I)),
)
_TIME_UNIT = re.compile(r"\b" + _TIME_UNITS + r"\b", re.I)
# the word that names a measure, against a text whose question asks that measure in other words:
# "marathon distance" = "how many miles is a marathon", "How many minutes should I microwave a potato?" =
# "How long do I microwave a potato for?", "how fast is 60 mph in km/h" = "What's 60 mph in km/h?"
_MEASURE_WORDS = {canonical("distance"): "length", canonical("length"): "length", canonical("speed"): "speed",
                  canonical("duration"): "duration", canonical("cost"): "price",
                  **{canonical(w): "duration" for w in ("minute", "minutes", "hour", "hours")}}


@lru_cache(maxsize=65536)
def _measures_asked(text: str) -> frozenset[str]:
    return frozenset(name for name, pattern in _MEASURES if pattern.search(text))


def _measure_named(mine: list[str], text: str, other: str, light_apart: bool) -> list[str]:
    if light_apart or not any(t in _MEASURE_WORDS for t in mine):  # (not "plank duration" / "… a side plank")
        return mine
    asked, other_asked = _measures_asked(text), _measures_asked(other)
    # a unit against the other's unit is a swap ("How many minutes are in a week?" ≠ "… hours …?")
    other_units = _TIME_UNIT.search(other) is not None
    return [t for t in mine if not (t in _MEASURE_WORDS and _MEASURE_WORDS[t] in other_asked
                                    and asked <= {_MEASURE_WORDS[t]}
                                    and not (_MEASURE_WORDS[t] == "duration" and other_units))]


def _said_otherwise(mine: list[str], text: str, other: str, x: Facts, y: Facts) -> list[str]:
    """`mine` (terms of `text` that `other` lacks) less those `other` says in its own words: required / need,
    a minimum / what one needs, the signs of X / how to tell if X, paying a tax / taxable, the difference / how
    to tell X from Y, how often / how many times a day, "in English", the verb of "how long does X take" / a
    duration, turning a colour / the colour, a temperature set / the temperature, a food given an animal / eaten,
    a spreadsheet's or a conversion's formula / doing it, cooked to a temperature or rested after cooking / the
    temperature or the resting time, travelling to a place or with a visa / the place or the visa."""
    drop = set()
    if _REQUIRED in mine and _NEEDING.search(other):
        drop.add(_REQUIRED)
    if _MIN in mine and _NEEDING.search(other) and not _NEEDING.search(text) and not lx.SUPERLATIVES & y.words:
        drop.add(_MIN)  # (not "What credit score do I need to get the best rate?")
    if _SIGNS in mine and shapes.TELLING.search(other):
        drop.add(_SIGNS)
    if _COST in mine and _PAYING_TAX.search(text) and _TAXES & y.words:
        drop.add(_COST)
    if _DIFFER in mine and _TELL_APART.search(other):
        drop.add(_DIFFER)
    if _OFTEN in mine and _TIMES_A.search(other):
        drop.add(_OFTEN)
    if _TAKE_TIME in mine and _HOW_LONG_TAKE.search(text) and _ASKS_DURATION.search(other):
        drop.add(_TAKE_TIME)
    if _TURN in mine and any(canonical(m.group(1).lower()) in y.words for m in _TURNING_COLOUR.finditer(text)):
        drop.add(_TURN)
    if _SET in mine and _SET_TO.search(text) and _ASKS_TEMPERATURE.search(text) and _ASKS_TEMPERATURE.search(other):
        drop.add(_SET)
    if _EAT in mine and _GIVING_TO.search(other):
        drop.add(_EAT)
    # a spreadsheet does things with formulas: "Excel formula to count non-empty cells" = "How do I count the cells
    # that are not blank in Excel?" (not a formula as the way: "… in Excel using a formula"); a conversion's formula
    # is how to convert ("celsius to fahrenheit formula", the same way round; the formula of what is calculated:
    # `_implied`)
    if _FORMULA in mine and not _BY_FORMULA.search(text) and (
            _SPREADSHEETS & x.words & y.words or _CONVERT in y.words and any(x.ends) and x.ends == y.ends):
        drop.add(_FORMULA)
    # meat is cooked to a temperature and rested after cooking: "chicken done temperature" = "What temperature should
    # chicken be cooked to?", "steak resting time" = "How long should I rest a steak after cooking?" (not "… before
    # cooking", nor why it rests; cooking named by its method: `_implied`)
    if _COOK in mine and (_ASKS_TEMPERATURE.search(text) and _ASKS_TEMPERATURE.search(other)
                          or _REST_AFTER_COOKING.search(text) and _REST in y.words
                          and _ASKS_DURATION.search(text) and _ASKS_DURATION.search(other)):
        drop.add(_COOK)
    # travelling to a place the other text names, or with a visa both name: "Vietnam tourist visa US citizens" = "Do
    # US citizens need a visa to visit Vietnam …?" (not from a place: "… to the US from Japan?" ≠ "japan visa for us
    # citizens")
    if _TRAVEL in mine and not x.ends[0] and (_TRAVELLING_TO.search(text) and (x.places_in | x.ends[1]) & y.words
                                              or _VISAS & x.words & y.words and not y.ends[0]):
        drop.add(_TRAVEL)
    if _ENGLISH in mine and _IN_ENGLISH.search(text) and not _NOT_ASKED_IN_ENGLISH.search(text) \
            and not (_LANGUAGE_NAMES - {_ENGLISH}) & y.words:
        drop.add(_ENGLISH)
    return [t for t in mine if t not in drop] if drop else mine


# "appear" and "seem" before what a thing is said to be are "is": "Why does the sky appear blue?" = "Why is the
# sky blue?" (not "appears in a column", "seems like")
_COPULA = re.compile(r"\b(?:appears?|appeared|seems?|seemed)\s+(?!(?:in|on|at|to|as|like|for|when|after|before|"
                     r"with|from|and|or)\b)[^\W\d_]+", re.I)
_COPULA_TERMS = frozenset(canonical(w) for w in "appear appears appeared seem seems seemed".split())


def _beyond_copula(unmatched: list[str], text: str) -> list[str]:
    if _COPULA_TERMS.intersection(unmatched) and _COPULA.search(text):
        return [t for t in unmatched if t not in _COPULA_TERMS]
    return unmatched


def _swapped_alike(missing: list[str], extra: list[str]) -> tuple[list[str], list[str]]:
    """Both lists less each pair of words that say one thing (`lexicon.SWAPPED_ALIKE`), one on each side."""
    if not (missing and extra):
        return missing, extra
    for m in list(missing):
        e = next((e for e in extra if frozenset((m, e)) in _SWAPPED_ALIKE), None)
        if e is not None:
            missing = [t for t in missing if t != m]
            extra = [t for t in extra if t != e]
    return missing, extra


def _implied(mine: list[str], theirs: list[str], x: Facts, y: Facts) -> list[str]:
    """`mine` (terms of x that y lacks) less those y says in other words: the body of a human ("bones in the
    human body" = "bones does a grown human have"), the motion whose speed both ask, the formula of what y
    asks to calculate (with no "from" or "to" that a formula's name leaves open), the cooking that y names by
    its method."""
    if not mine:
        return mine
    kept = []
    for t in mine:
        if t in _BODY and (_BODY - {t}) & y.words:
            continue
        if t in _MOTION and (x.words | y.words) & _SPEED and not _MOTION.intersection(theirs):
            continue
        if t == _FORMULA and _CALCULATING & y.words and not any(y.ends):  # (not "… marks from the percentage")
            continue
        if t == _COOK and _COOKING_METHODS & y.words:
            continue
        if t == _WEIGH and _WEIGHT_UNITS & (x.words | y.words):  # "What does a cup of flour weigh in grams?"
            continue
        if t == _ORBIT and _ORBITING & x.words and _ORBITING & y.words:
            continue
        if t == _ENERGY and _ENERGY_UNITS & y.words:
            continue
        if t in _SPOKEN and _LANGUAGE in x.words and _LANGUAGE in y.words and not (x.amount or y.amount) \
                and ("languages" in x.words) == ("languages" in y.words):  # (not "Which languages …" / "main language")
            continue
        if t in _FUNCTION_NOUNS and y.intent == "function":
            continue
        if (t == _LIFESPAN and _LIFE_VERBS & y.words and y.amount
                or t in _LIFE_VERBS and _LIFESPAN in y.words and x.amount):
            continue
        if t in _DOMAIN_OF and _DOMAIN_OF[t] & y.words:  # "undo the last git commit" = "undo the last commit"
            continue
        if t == _MATCH and _REGEX in x.words and _REGEX in y.words:
            continue
        if (t == _TAKE and _DRUGS & x.words & y.words and (_SAFE in y.words or "use" in y.words)
                and not x.light ^ y.light):  # (not "… ibuprofen every day safe?")
            continue
        if t in _CONSUMING and _SAFE in x.words and _SAFE in y.words and not _CONSUMING.intersection(theirs):
            continue
        if t in _SLEEP_COUNTS and _SLEEP & x.words and _SLEEP & y.words:
            continue
        # what is taken, against how much of it: "How much protein should I eat?" = "How much protein do I need?"
        # (not the time a thing takes: "How long did it take to film Titanic?" ≠ "How long is Titanic?")
        if t in _TAKING and x.amount and y.amount and not _TAKING.intersection(theirs) \
                and not (t == _TAKE and "it" in x.words and x.amount == "measure"):
            continue
        kept.append(t)
    return kept


_BOUND = re.compile(r"\b(over|above|more than|greater than|at least|under|below|less than|fewer than|at most)\s+"
                    r"[$£€]?(\d[\d,]*(?:\.\d+)?)", re.I)
_UPPER = frozenset(("over", "above", "more than", "greater than", "at least"))


def _bounds(text: str) -> frozenset[tuple[str, str]]:
    """Which side of a number a text asks about: "over 18,000" (above) or "under $18,000" (below)."""
    if not any(c.isdigit() for c in text):
        return frozenset()
    return frozenset(("above" if m.group(1).lower() in _UPPER else "below", m.group(2).replace(",", ""))
                     for m in _BOUND.finditer(text))


_ONE_OF = re.compile(r"\b(?:one|single|each|either|any)\b", re.I)


def _unpaired(x: Facts, y: Facts, other: str) -> tuple[float, ...]:
    """x's numbers less a "two" that the other text says with a plural alone: "How do I merge two dictionaries in
    Python?" = "python merge dicts", "merge two PDFs on a Mac" = "combine pdfs mac" (not three, not a count the
    other text gives itself)."""
    if 2.0 not in x.numbers or x.numbers.count(2.0) != 1 or y.counted or _ONE_OF.search(other):
        return x.numbers  # (not "by one of the keys" against "by two keys")
    for noun, value in x.counted:
        if value == 2.0 and noun in y.words and any(
                t != noun and t.endswith("s") and canonical(t) == noun for t in tokenize(other)):
            numbers = list(x.numbers)
            numbers.remove(2.0)
            return tuple(numbers)
    return x.numbers


_ASKER = frozenset("i me my our we us".split())


# "who" before what someone does ("who needs to file"), not who someone is ("napoleon who was he")
_WHO_DOES = re.compile(r"\bwho\s+(?!(?:is|was|are|were|am)\b)[a-z]+", re.I)


def _owners_named(x: Facts) -> set[str]:
    """Who a text names that could own a thing: its owners, its nouns, the asker."""
    return {o for _, o in x.owners} | x.words | ({"me"} if x.words & _ASKER else set())


# owners that are someone: what they own is not the asker's ("my boss's calendar" ≠ "my calendar")
_SOMEONE = frozenset(canonical(w) for w in """boss neighbor neighbour wife husband partner spouse son daughter kid
child mom mother dad father parent sister brother friend roommate landlord tenant coworker colleague employer
employee manager teacher baby dog cat else someone""".split())


def _owned_through(middle: str, owner: str, x: Facts) -> bool:
    """A thing owned through something the owner has: "my Mac's public IP" is my public IP."""
    return (middle, owner) in x.owners and middle not in _SOMEONE


def _safety_lean(text: str) -> str | None:
    safe, unsafe = bool(_SAFE_SIDE.search(text)), bool(_UNSAFE_SIDE.search(text))
    return None if safe == unsafe else "safe" if safe else "unsafe"


def verify_rules(query: str, cached: str) -> Verdict:
    """The lexical rules alone (the guard before the learned stage; kept for comparison and tests)."""
    a, b = analyse(query), analyse(cached)
    if a.language and b.language and a.language != b.language:
        return Verdict(False, "language", f"{a.language} vs {b.language}")
    if a.numbers != b.numbers and _unpaired(a, b, cached) != _unpaired(b, a, query):
        return Verdict(False, "numbers", f"{list(a.numbers)} vs {list(b.numbers)}")
    if a.decimals != b.decimals:  # "Python 3.10" ≠ "Python 3.1"
        return Verdict(False, "numbers", f"{list(a.decimals)} vs {list(b.decimals)}")
    if a.percents != b.percents:
        return Verdict(False, "numbers", f"percent of {list(a.percents)} vs {list(b.percents)}")
    if a.percent_asks != b.percent_asks and a.percents:  # "15% of 80" ≠ "80 is 15% of what?" ≠ "80 with 15% off"
        return Verdict(False, "numbers", f"the {a.percent_asks} vs the {b.percent_asks} of a percentage")
    # the same thing counted with other numbers: "serves 6 … for 4 people" ≠ "serves 4 … for 6 people" (one
    # number in common is a rewording: "15 vs 30 year mortgage" = "a 15-year and a 30-year mortgage")
    counted_a: dict[str, set[float]] = {}
    counted_b: dict[str, set[float]] = {}
    for counted, facts in ((counted_a, a), (counted_b, b)):
        for word, value in facts.counted:
            counted.setdefault(word, set()).add(value)
    for word in counted_a.keys() & counted_b.keys():
        if not counted_a[word] & counted_b[word]:
            return Verdict(False, "numbers", f"{sorted(counted_a[word])} vs {sorted(counted_b[word])} {word}")
    if a.clocks != b.clocks:  # "9:30am" ≠ "9am", "21:45" ≠ "21:00"
        return Verdict(False, "numbers", f"times {list(a.clocks)} vs {list(b.clocks)}")
    # (one text's ordinals against another's are a swap wherever they stand: "capo on the 4th fret" ≠ "… 2nd")
    if a.ordinals != b.ordinals and (a.ordinals and b.ordinals or _asked_ordinals(query) != _asked_ordinals(cached)):
        return Verdict(False, "numbers", f"ordinals {list(a.ordinals)} vs {list(b.ordinals)}")
    for x, y in ((a, b), (b, a)):  # both ways round: the guard refuses a pair whichever side is cached
        for op, left, right in x.operations:
            if (op, right, left) in y.operations and (op, left, right) not in y.operations:
                return Verdict(False, "numbers", f"{left} {op} {right} vs {right} {op} {left}")
    if a.points and b.points and a.points != b.points:  # "through (3, 2) and (11, 6)" ≠ "… (2, 3) and (6, 11)"
        return Verdict(False, "numbers", f"points {sorted(a.points)} vs {sorted(b.points)}")
    # "2x + 5 = 15" ≠ "2x - 5 = 15"; a product may be written without its "*" ("x^2 sin x" = "x^2 * sin(x)")
    if a.operators and b.operators and _unwritten_products(a.operators) != _unwritten_products(b.operators):
        return Verdict(False, "numbers", f"expression {' '.join(a.operators)} vs {' '.join(b.operators)}")
    for x, y in ((a, b), (b, a)):  # "sin(x^2)" ≠ "sin(x)"
        applied = {name: argument for name, argument in y.calls}
        for name, argument in x.calls - y.calls:
            if name in applied and (name, applied[name]) not in x.calls:
                return Verdict(False, "numbers", f"{name}({argument}) vs {name}({applied[name]})")
    if a.code and b.code and a.code != b.code:  # "`typeof typeof null`" ≠ "`typeof null`"
        return Verdict(False, "quoted", f"code {list(a.code)} vs {list(b.code)}")
    if a.quoted and b.quoted and a.quoted != b.quoted:  # 'Translate "Where are the stations?"' ≠ '… "Where is the station?"'
        return Verdict(False, "quoted", f"{list(a.quoted)} vs {list(b.quoted)}")
    # the words to say in another language, inflected otherwise: "how do you say i missed you in spanish" ≠ "… "I miss
    # you" …" (other words are the terms check's: "thanks" = "thank you")
    said_a, said_b = _said_in(query), _said_in(cached)
    if said_a and said_b and said_a != said_b:
        only_b = {canonical(w) for w in set(said_b) - set(said_a)}
        inflected = sorted(w for w in set(said_a) - set(said_b) if canonical(w) in only_b)
        if inflected:
            return Verdict(False, "quoted", f"say {' '.join(said_a)!r} vs {' '.join(said_b)!r}")
    bounds_a, bounds_b = _bounds(query), _bounds(cached)  # "gifts under $18,000" ≠ "gift tax over 18000 dollars"
    if bounds_a and bounds_b and bounds_a != bounds_b and {v for _, v in bounds_a} == {v for _, v in bounds_b}:
        return Verdict(False, "direction", f"{sorted(bounds_a)} vs {sorted(bounds_b)}")
    if _unsure_negated(query) != _unsure_negated(cached):  # (a.negated, unless the asker says what they are unsure of)
        return Verdict(False, "negation")
    # the negation moved to another word both texts name: "Why can you see lightning but hear no thunder?" ≠
    # "Why can you hear thunder but not see lightning?" (not "hear no thunder" = "not hear thunder")
    if (a.negated_words and b.negated_words and not (a.negated_words & b.negated_words)
            and a.negated_words <= b.words and b.negated_words <= a.words):
        return Verdict(False, "negation", f"not {'/'.join(sorted(a.negated_words))} vs not "
                                          f"{'/'.join(sorted(b.negated_words))}")
    for word in a.poles:
        for opposite in POLE_OF[word]:
            if opposite in b.poles and not (word in b.poles and opposite in a.poles):
                return Verdict(False, "poles", f"{word} vs {opposite}")
    # both poles on both sides, in the other order: "relative major of G minor" ≠ "relative minor of G major"
    # (not when they are joined as alternatives: "buy or sell" = "sell or buy", "upload vs download")
    for word in sorted(a.poles & b.poles):
        for opposite in POLE_OF[word] & a.poles & b.poles:
            order_a, order_b = _pole_order(query, word, opposite), _pole_order(cached, word, opposite)
            if order_a is not None and order_b is not None and order_a != order_b:
                return Verdict(False, "poles", f"{word} … {opposite} vs {opposite} … {word}")
    if a.question and b.question and not (a.question & b.question) \
            and {a.stage_asked, b.stage_asked} != {"age", "when"}:
        return Verdict(False, "question", f"{sorted(a.question)} vs {sorted(b.question)}")
    if frozenset((a.intent, b.intent)) in INTENT_CONFLICTS:
        return Verdict(False, "intent", f"{a.intent} vs {b.intent}")
    # a keyword query that asks who, through an agent noun ("odyssey author") or a "who" ("uk self assessment who
    # needs to file"), against an opening that asks something else of the same thing ("What is the Odyssey
    # about?", "How do I register for Self Assessment?")
    for x, y, ty in ((a, b, cached), (b, a, query)):
        if (x.intent and y.intent is None and (y.agent_asked or "person" not in x.question and _WHO_DOES.search(ty))
                and frozenset((x.intent, "person")) in INTENT_CONFLICTS):
            return Verdict(False, "intent", f"{x.intent} vs person")
    sa, sb = shape_of(query), shape_of(cached)  # read here, not before: most pairs are refused above
    # naming things against counting them: "What are the names of Mars's moons?" ≠ "mars number of moons"
    for x, y, sx, sy in ((a, b, sa, sb), (b, a, sb, sa)):
        if sx.names_asked and sy.count_asked and not (sx.count_asked or sy.names_asked):
            return Verdict(False, "intent", "names vs number")
        # what a thing is made of against counting its parts: "What are violin strings made of?" ≠ "violin
        # number of strings"
        if x.intent == "composition" and y.intent is None and sy.count_asked:
            return Verdict(False, "intent", "composition vs number")
    # how big a superlative is against naming it: "How tall is the tallest mountain in Africa?" measures it,
    # "highest peak africa" names it (a keyword query that writes a measure, "… height", measures it too)
    for x, y, sx, sy in ((a, b, sa, sb), (b, a, sb, sa)):
        if (x.intent == "quantity" and y.intent in (None, "which") and sx.measure_asked and sx.superlative
                and sy.superlative and not sy.measure_written):
            return Verdict(False, "intent", "a superlative measured vs named")
    # what happened against a question type the other text asks without an opening that says so: "How did
    # World War II end?" ≠ "What year did WWII end?" (when). Only "how did" (and the agent noun above): the
    # question types read from keywords are too loose for the other intents ("java array length" = "How do I
    # find the length of an array?")
    for x, y in ((a, b), (b, a)):
        if x.intent == "how-did" and y.intent is None:
            for kind in sorted(y.question):
                if frozenset((x.intent, kind)) in INTENT_CONFLICTS:
                    return Verdict(False, "intent", f"{x.intent} vs {kind}")
    # a comparison of two things against moving from one to the other: "Roth vs traditional IRA" ≠ "How do I
    # convert a traditional IRA to a Roth IRA?", "Celsius or Fahrenheit?" ≠ "convert Celsius to Fahrenheit";
    # or against working one out from the other: "gross vs net salary" ≠ "How do I calculate my gross pay from
    # my net pay?"; and what two things share is not how they differ: "What do weather and climate have in
    # common?" ≠ "weather vs climate"
    for x, y, tx, ty in ((a, b, query, cached), (b, a, cached, query)):
        if x.intent == "comparison" and y.intent != "comparison":
            if y.words & _MOVING and (y.targets | y.ends[1]) & x.words:
                return Verdict(False, "intent", f"comparison vs to {sorted((y.targets | y.ends[1]) & x.words)}")
            if y.words & _CALCULATING and "from" in y.words:
                return Verdict(False, "intent", "comparison vs calculating one from the other")
            if _SIMILARITY.search(ty) and not _SIMILARITY.search(tx) and _DIFFERING & x.words:
                return Verdict(False, "intent", "in common vs comparison")
    for x, y, tx, ty in ((a, b, query, cached), (b, a, cached, query)):
        # what a thing is, against how to work it out: "What is opportunity cost?" ≠ "How do you calculate
        # opportunity cost?" (not when the thing is a value of something: "What is the area of a circle?")
        if (x.intent == "howto" and _CALCULATING & x.words and y.intent in ("definition", "what-is")
                and not y.numbers and "of" not in y.words and _FORMULA not in y.words):
            return Verdict(False, "intent", f"how to calculate vs {y.intent}")
        if y.intent == "definition" and _MEANING.search(ty) and _PICK.search(tx) and not _PICK.search(ty):
            return Verdict(False, "intent", "which vs definition")
    lean_a, lean_b = _safety_lean(query), _safety_lean(cached)
    if (lean_a and lean_b and lean_a != lean_b and "which" in (a.intent, b.intent)
            and "yesno" not in (a.intent, b.intent)):
        return Verdict(False, "poles", f"{lean_a} vs {lean_b}")
    # how long a thing takes or lasts, against a text that asks no type of question the guard reads and names no time:
    # "How long does it take to get rid of fungus gnats?" ≠ "fungus gnats houseplant soil get rid of" (a how-to),
    # "How long should a business plan be?" ≠ "writing a business plan" (not "how long to boil an egg" / "boil egg
    # time", "golden retriever lifespan")
    for x, tx, y, ty in ((a, query, b, cached), (b, cached, a, query)):
        if (_ASKS_HOW_LONG.search(tx) and y.intent is None and not y.question and y.amount is None
                and not (y.words & _DURATION_WORDS) and not _ASKS_HOW_LONG.search(ty)):
            return Verdict(False, "intent", "how long vs a text that names no time")
    if frozenset((a.amount, b.amount)) in AMOUNT_CONFLICTS:  # "How long are the episodes?" ≠ "How many episodes?"
        return Verdict(False, "intent", f"{a.amount} vs {b.amount}")
    if a.manner and b.manner and not (a.manner & b.manner):  # "fastest way to X" ≠ "easiest way to X"
        return Verdict(False, "intent", f"{'/'.join(sorted(a.manner))} vs {'/'.join(sorted(b.manner))} way")
    if (a.every & b.singular) or (b.every & a.singular):  # "all the drummers" ≠ "the drummer"
        return Verdict(False, "question", f"all of {sorted((a.every & b.singular) | (b.every & a.singular))} vs one")
    if a.acts and b.acts and not (a.acts & b.acts):  # "list S3 buckets" ≠ "create an S3 bucket"
        return Verdict(False, "intent", f"{'/'.join(sorted(a.acts))} vs {'/'.join(sorted(b.acts))}")
    if (a.forms - b.mentioned_forms) or (b.forms - a.mentioned_forms):
        return Verdict(False, "form", f"{sorted(a.forms)} vs {sorted(b.forms)}")
    if (a.targets & b.sources) - b.targets or (a.sources & b.targets) - b.sources:
        return Verdict(False, "direction", f"{sorted(a.sources)}→{sorted(a.targets)} vs "
                                           f"{sorted(b.sources)}→{sorted(b.targets)}")
    (a_from, a_to), (b_from, b_to) = a.ends, b.ends
    if (a_from & b_to) - b_from or (a_to & b_from) - a_from:  # "to Japan from the US" ≠ "to the US from Japan"
        return Verdict(False, "direction", f"from {sorted(a_from)} to {sorted(a_to)} vs from {sorted(b_from)} "
                                           f"to {sorted(b_to)}")
    # Origins swapped without a "to": "in the US if I'm from the UK" ≠ "in the UK if I'm from the US"
    # (not in a contrast, where "from" names no origin: "jelly different from jam" = "jam … from jelly")
    if (a_from and b_from and not (a_from & b_from) and a_from <= b.words and b_from <= a.words
            and not (CONTRAST & (a.words | b.words))):
        return Verdict(False, "direction", f"from {sorted(a_from)} vs from {sorted(b_from)}")
    # the same two names, the other one where it happens: "Americans … in Canada" ≠ "a Canadian … in the US"
    if (a.places_in and b.places_in and not (a.places_in & b.places_in)
            and a.places_in <= countries_named(b.words) and b.places_in <= countries_named(a.words)):
        return Verdict(False, "direction", f"in {sorted(a.places_in)} vs in {sorted(b.places_in)}")
    # a time told "here" or "there" names its place only through the asker: "… I'm in New York — what time is it
    # there when it's 9am here?" is not "If it's 9am in London, what time is it in New York?"
    for x, y in ((a, b), (b, a)):
        if x.clocks and _DEICTIC & x.words and y.clock_places and not _DEICTIC & y.words:
            return Verdict(False, "direction", f"a time told here or there vs in {sorted(y.clock_places)}")
    # the asker's side and the other's, traded: "We'll be sharing our data with them" ≠ "They'll be sharing
    # their data with us"
    if a.sides and b.sides and a.sides != b.sides:
        return Verdict(False, "direction", f"{' then '.join(a.sides)} vs {' then '.join(b.sides)}")
    # the same things owned the other way round, by owners both name: "Who pays when my tree falls on my
    # neighbor's house?" ≠ "… my neighbor's tree falls on my house?", "Can my dog eat my cat's food?" ≠ "Can my cat eat
    # my dog's food?" (not "my daughter's teacher" / "my teacher": the daughter is not named there)
    if a.owners and b.owners:  # (most texts own nothing: the owners named are gathered only when both do)
        owners_a, owners_b = _owners_named(a), _owners_named(b)
        for thing, owner in a.owners - b.owners:
            other = next((o for t, o in b.owners - a.owners if t == thing and o in owners_a and owner in owners_b
                          and not _owned_through(o, owner, b) and not _owned_through(owner, o, a)), None)
            if other is not None:
                return Verdict(False, "direction", f"whose {thing}: {owner} vs {other}")
    if a.clock_places and b.clock_places and not (a.clock_places & b.clock_places):
        return Verdict(False, "direction", f"a time told in {sorted(a.clock_places)} vs {sorted(b.clock_places)}")
    # one amount in another of the currencies or units both name: "100 US dollars in Canadian dollars" ≠ "How
    # many US dollars is 100 Canadian dollars?" (not the noun a count happens to stand before: "3 types of rock")
    for word, value in a.counted - b.counted:
        for other, other_value in b.counted - a.counted:
            if (value == other_value and word != other and word in b.words and other in a.words
                    and {word, other} <= COUNTRIES | TYPED and not {word, other} & _SPANS):  # ("$60,000 annual")
                return Verdict(False, "direction", f"{value:g} {word} vs {other_value:g} {other}")
    b_ordered = _in_words_of(b.ordered, a.ordered)
    for left, right in a.ordered:
        if (right, left) in b_ordered and (left, right) not in b_ordered:
            return Verdict(False, "direction", f"{left}→{right} vs {right}→{left}")
    swapped = (a.subject_of & b.object_of) | (a.object_of & b.subject_of)  # a text has one role or none
    if swapped:
        return Verdict(False, "direction", f"subject and object of '{min(swapped)}' swapped")
    if {a.self_role, b.self_role} == {"subject", "object"}:  # "What should I get my wife?" ≠ "… my wife get me?"
        return Verdict(False, "direction", f"the asker as {a.self_role} vs {b.self_role}")
    eating = a.eating and b.eating and "comparison" not in (a.intent, b.intent)  # "plant-eating vs meat-eating"
    if eating and (a.eating[0] & b.eating[1]) and (a.eating[1] & b.eating[0]) \
            and not (a.eating[0] & b.eating[0]):  # "Can cats eat dog food?" ≠ "Is cat food safe for dogs?"
        return Verdict(False, "direction", "who eats and what, swapped")
    shaped = shapes.conflict(sa, sb, a, b)  # order, roles, particles, tense, …
    if shaped:
        return Verdict(False, *shaped)
    missing, extra = unmatched_terms(query, cached)
    missing, extra = _beyond_context(missing, query), _beyond_context(extra, cached)
    if eating and (a.eating[0] & b.eating[0]) and (a.eating[1] & b.eating[1]):
        # "Can dogs eat grapes?" asks whether grapes are safe for dogs: the verb and "safe" say one thing
        missing, extra = [t for t in missing if t not in _EATING], [t for t in extra if t not in _EATING]
    # an intake is how much is taken: "daily water intake" asks what "How much water should I drink a day?"
    # asks (not "Why is my dog drinking so much water?", which asks no amount)
    for y, mine, theirs in ((b, missing, extra), (a, extra, missing)):
        if set(mine) & _INTAKE and "quantity" in y.question:
            mine[:] = [t for t in mine if t not in _INTAKE]
            theirs[:] = [t for t in theirs if t not in _TAKING]
    if a.operators and b.operators:  # both write an expression, whose operators were compared above
        missing, extra = [t for t in missing if t != _MULTIPLY], [t for t in extra if t != _MULTIPLY]
    missing, extra = _implied(missing, extra, a, b), _implied(extra, missing, b, a)
    for x, y, mine, theirs in ((a, b, missing, extra), (b, a, extra, missing)):  # a drug's dose is what is taken
        if (_DOSE in mine and _TAKE in theirs and _DRUGS & x.words & y.words and _TAKE not in x.words
                and (y.amount or _MOST & y.words)):
            mine.remove(_DOSE)
            theirs.remove(_TAKE)
    missing, extra = _swapped_alike(missing, extra)  # (first: "the length of a marathon" = "how far is a marathon")
    light_apart = bool((a.light ^ b.light) - _AMOUNT_LIGHT)
    missing = _measure_named(missing, query, cached, light_apart)
    extra = _measure_named(extra, cached, query, light_apart)
    missing, extra = _said_otherwise(missing, query, cached, a, b), _said_otherwise(extra, cached, query, b, a)
    if bool(missing) != bool(extra):  # a field named on one side only (two fields named are a swap)
        missing, extra = _beyond_field(missing, query), _beyond_field(extra, cached)
    missing, extra = _beyond_copula(missing, query), _beyond_copula(extra, cached)
    # (not against a pick: "How does a password manager work?" ≠ "What is the best password manager?")
    if "which" not in (a.intent, b.intent):
        missing, extra = _beyond_how_it_works(missing, query), _beyond_how_it_works(extra, cached)
    if {a.stage_asked, b.stage_asked} == {"age", "when"}:  # the age asked is the when
        missing, extra = [t for t in missing if t != "age"], [t for t in extra if t != "age"]
    if missing or extra:
        return Verdict(False, "terms", f"only in query {missing}, only in cached {extra}")
    a_light, b_light = _named_light(a, b), _named_light(b, a)
    if (a_light - b.words) and (b_light - a.words):
        return Verdict(False, "light", f"{sorted(a_light - b.words)} vs {sorted(b_light - a.words)}")
    # Swapped where the other text still writes the word elsewhere: "which US state has the most *state*
    # parks" ≠ "… the most *national* parks" ("state" is in both, but one of its uses became "national")
    a_counts = dict(a.light_counts) | dict(a.term_counts)
    b_counts = dict(b.light_counts) | dict(b.term_counts)
    more_a = {w for w, n in a_counts.items() if n > b_counts.get(w, 0) > 0}  # written in both, more often in a
    more_b = {w for w, n in b_counts.items() if n > a_counts.get(w, 0) > 0}
    # Names written more often on each side have traded places: "a Canadian living in the US … file Canadian
    # taxes" ≠ "a US citizen in Canada … file US taxes" (common words repeat freely in a rewording); a
    # country is a name however it is typed ("can canadians in the united states vote in american elections")
    if more_a and more_b:
        named_a, named_b = more_a & (_names(query) | COUNTRIES), more_b & (_names(cached) | COUNTRIES)
        if named_a and named_b:
            return Verdict(False, "direction", f"{sorted(named_a)} written more often vs {sorted(named_b)}")
    for x, kept, y_light in ((a, more_a, b_light), (b, more_b, a_light)):
        new = y_light - x.words
        if kept and new:  # "the US … US taxes" ≠ "the US … state taxes"
            return Verdict(False, "light", f"one use of {sorted(kept)} became {sorted(new)}")
    return Verdict(True)
