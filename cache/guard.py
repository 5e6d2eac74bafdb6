"""The near-miss guard: a semantic candidate is served only if nothing in the two texts contradicts.

Sentence embeddings place "capital of Australia" and "capital of Austria" closer together than many
true paraphrases (measured on cache/data: at any threshold that keeps 90% of paraphrases, over half of
the near-misses would hit). So after the threshold, the guard compares what the two questions *pin
down*, with cheap deterministic checks (no model; p50 ~0.18 ms for a new pair on an AVX-512 CPU, ~0.11 ms
once both texts were analysed — the analysis is cached per text):

1. language    — both texts in the same language (stop-word fingerprint and script).
2. numbers     — the same multiset of numbers (digits, number words, ordinals, roman numerals, years),
                 and the operands of a division, power or subtraction in the same order ("4/3" ≠ "3/4").
3. negation    — both negated or both not.
4. poles       — no antonym facing its opposite (before/after, max/min, enable/disable, …).
5. question    — compatible question types (who ≠ when ≠ where ≠ why ≠ how many; "telephone inventor"
                 asks who, "titanic sinking date" when).
6. intent      — the wording asks for the same kind of answer: "How do I calculate EBITDA?" (a how-to) is
                 not "What is EBITDA?" (a definition), "How long should I brine a turkey?" (an amount)
                 not "How do I brine a turkey?", "What causes inflation?" not "define inflation".
7. form        — neither asks for a form of answer the other does not mention: a poem, a joke, a
                 summary, "with answers", "briefly", "in a table" (`lexicon.OUTPUT_FORMS`).
8. direction   — conversions and translations go the same way (miles→km ≠ km→miles), and the question
                 word keeps its role: "What do koalas eat?" (object) is not "What eats koalas?" (subject).
9. terms       — every specific term of either text (anything that is not a function, phrasing or
                 light word, after spelling/abbreviation/synonym canonicalisation) appears in the other,
                 or a WordNet synonym of it does (`cache.synonyms`; "earth"/"world", "graph"/"chart").
                 Quoted words are always specific; units and languages need the word itself. Words
                 spelled like function words are terms where they name something: "the US", "in May",
                 "a will", "IT", single letters ("vitamin K").
10. light swap — "largest *city*" vs "largest *country*": light words may be added, never swapped.

Checks 1–8 are hard vetoes. Every other pair goes to a small learned verifier (`verify`): the
gradient-boosted trees over pair features (`cache.verifier_model`, fitted on the train split, cuts
chosen on dev and on the train split out of fold), or the fine-tuned cross-encoder
(`cache.cross_encoder`) when its model file `cache/model/cross_encoder.safetensors` is present. It may
refuse a pair 9–10 let through (a question the rules read as the same: "What is the main idea of Walden?" vs
"Who wrote Walden?") and, with an accept cut at or below 1, overturn a refusal by
9–10 (a reworded word); the shipped trees only refuse. `verify_rules` is the rules alone.

The guard errs towards refusing: a refused paraphrase costs one upstream call, a wrong hit costs a
wrong answer. `verify(query, cached)` is symmetric in intent but reports the first failing check.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from cache import lexicon as lx
from cache import synonyms

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TOKEN = re.compile(r"c\+\+|c#|f#|\.net|[^\W_]+(?:[.,]\d+)*|[$€£¥%°×*]", re.UNICODE | re.IGNORECASE)
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|«([^»]+)»|'([^']{2,})'|‘([^’]+)’")
_DIGITS = re.compile(r"^\d+(?:[.,]\d+)*$")
_MAX_PHRASE = max(len(k) for k in lx.PHRASES)
_QUESTION_TYPES = {"who": "person", "whom": "person", "when": "time", "where": "place", "why": "reason",
                   "cause": "reason", "how_many": "quantity"}
_UNIT_WORDS = frozenset("""
mile kilometer meter centimeter millimeter inch foot yard pound ounce kilogram gram milligram liter
milliliter gallon cup teaspoon tablespoon calorie celsius fahrenheit kelvin dollar euro yen franc yuan rupee
mile_per_hour kilometer_per_hour light_year light_second hour minute second day week month year stick
acre hectare quart pint stone ton tonne byte kilobyte megabyte gigabyte terabyte kilobit megabit gigabit
joule watt kilowatt kilowatt_hour horsepower btu radian carat barrel bushel furlong fathom knot decade
century millennium millisecond microsecond nanosecond bitcoin satoshi penny
""".split())
_LANGUAGE_NAMES = frozenset("""
english french german spanish italian portuguese dutch japanese chinese mandarin cantonese korean russian
arabic hindi swedish norwegian danish finnish polish greek turkish hebrew latin
""".split())
_TYPED = _UNIT_WORDS | _LANGUAGE_NAMES
_TARGET_MARKERS = frozenset({"to", "into", "in", "how_many"})
_QUANTITY_MARKERS = frozenset({"a", "an", "one", "per", "each"})


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


@dataclass(frozen=True, slots=True)
class Facts:
    """What a text pins down, computed once per text (cached)."""

    words: frozenset[str]  # every canonical token, function words included
    terms: frozenset[str]  # specific terms that must appear on the other side
    light: frozenset[str]
    numbers: tuple[float, ...]
    percents: tuple[float, ...]
    ordinals: tuple[int, ...]
    negated: bool
    poles: frozenset[str]
    question: frozenset[str]
    sources: frozenset[str]
    targets: frozenset[str]
    ordered: frozenset[tuple[str, str]]
    language: str | None
    intent: str | None  # the kind of answer the wording asks for (`_intent`)
    operations: frozenset[tuple[str, str, str]]  # (div|pow|sub, left, right): "4/3" → ("div", "4", "3")
    subject_of: frozenset[str]  # verbs whose subject the question word is: "What eats koalas?" (`_roles`)
    object_of: frozenset[str]  # verbs whose object it is: "What do koalas eat?"
    forms: frozenset[str]  # the forms the answer is asked to take: poem, summary, brief… (`_forms`)
    mentioned_forms: frozenset[str]  # forms the text names at all ("ocean poem")


def _script(text: str) -> str | None:
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            script = name.split(" ")[0] if name else "?"
            if script in ("LATIN",):
                continue
            if script.startswith("CJK"):
                script = "CJK"
            counts[script] = counts.get(script, 0) + 1
    if not counts:
        return None
    return max(counts, key=counts.get)


def _language(raw_tokens: list[str], text: str) -> str | None:
    """The text's language, or None when the evidence is thin (keyword queries have few stop words)."""
    script = _script(text)
    if script is not None:
        return script.lower()
    distinct = set(raw_tokens)  # "a … a" is one Portuguese-looking word, not two
    scores = {lang: len(distinct & words) for lang, words in lx.LANGUAGE_STOPWORDS.items()}
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top < 2 or top < 2 * second:
        return None
    return best


_STEMMER = snowballstemmer.stemmer("english")
_CANON: dict[str, str] = {}
for _value in set(lx.CANONICAL.values()):
    _CANON[_value] = _value
for _key, _value in lx.CANONICAL.items():
    _CANON[_key] = _value
_CANON_STEMMED: dict[str, str] = {}
for _key, _value in lx.CANONICAL.items():
    _CANON_STEMMED.setdefault(_STEMMER.stemWord(_key), _value)
for _value in set(lx.CANONICAL.values()):
    _CANON_STEMMED.setdefault(_STEMMER.stemWord(_value), _value)


def light_stem(word: str) -> str:
    """Snowball (Porter2) stem; short words and tokens with digits are kept as they are. snowballstemmer
    runs the C implementation (PyStemmer, a dependency) when it is installed: identical stems on every
    word of cache/data and the lexicon, and the guard's cold analysis of a text ~6x faster."""
    if not word.isalpha() or len(word) <= 3:
        return word
    return _STEMMER.stemWord(word)


def _canon(token: str) -> str:
    if token in _CANON:
        return _CANON[token]
    if not token.isascii():  # "Pokémon" = "Pokemon", "café" = "cafe"; other scripts keep their letters
        folded = "".join(ch for ch in unicodedata.normalize("NFKD", token) if not unicodedata.combining(ch))
        if folded != token and folded.isascii():
            return _canon(folded)
    stem = light_stem(token)
    return _CANON_STEMMED.get(stem, stem)


# A pole is matched on the canonical form analyse() compares ("inside" → "insid", "decrease" → "lower");
# the word as listed is kept too, for tokens the canonicaliser leaves as they are.
_POLE_OF: dict[str, set[str]] = {}
for _a, _b in lx.POLES:
    for _x, _y in ((_a, _b), (_canon(_a), _canon(_b))):
        if _x != _y:
            _POLE_OF.setdefault(_x, set()).add(_y)
            _POLE_OF.setdefault(_y, set()).add(_x)


_QUANTITY_NOUNS = frozenset(_canon(w) for w in lx.QUANTITY_NOUNS)


def _apply_phrases(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for n in range(min(_MAX_PHRASE, len(tokens) - i), 0, -1):
            repl = lx.PHRASES.get(tuple(tokens[i:i + n]))
            if repl is not None:
                out.extend(repl)
                i += n
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


# "US" is the country, "us" mostly the pronoun ("tell us"); a lower-case "us" opening a query or after
# "the"/"in"/"a" is the country too ("us passport renewal price", "jobs in the us")
_US = re.compile(r"\bU\.S\.(?:A\.)?|\bUSA?\b|^\W*us\b|(?<=\bthe )us\b|(?<=\bin )us\b|(?<=\ba )us\b", re.M)
_MAY = re.compile(r"(?<=[^\W\d_] )May\b|\bMay(?= \d)")  # "in May", "May 5"; not "May I …"
_WILL = re.compile(r"\b(a|my|the|your|his|her|their|living) will\b(?! be\b)|\b()will(?= (?:vs|versus)\b)", re.I)
_IT = re.compile(r"\bIT\b")
# Operations whose operands do not commute: "4/3" ≠ "3/4", "2 to the power of 10" ≠ "10 to the power of 2"
_NUM = r"(\d+(?:[.,]\d+)?)"
_OPERATION = re.compile(_NUM + r"\s*(/|÷|\^|\*\*|-|−| divided by | over | to the power of | minus )\s*" + _NUM, re.I)
_OPERATOR = {"/": "div", "÷": "div", "divided by": "div", "over": "div", "^": "pow", "**": "pow",
             "to the power of": "pow", "-": "sub", "−": "sub", "minus": "sub"}
_CLITICS = frozenset("s t d m ll re ve".split())  # what is left of "it's", "don't" when an apostrophe is odd


def _tokenize(text: str) -> list[str]:
    text = text.replace("’", "'").replace("‘", "'")
    text = _US.sub(" USA ", text)
    # content words that are spelled like function words: the month, the legal document, the agency
    text = _MAY.sub(" maymonth ", text)
    text = _WILL.sub(lambda m: f"{m.group(1) or ''} testament", text)
    if not text.isupper():
        text = _IT.sub(" infotech ", text)
    text = re.sub(r"([^\W_]+)-free\b", r"without \1", text)
    text = re.sub(r"\bcan't\b", "can not", text, flags=re.I)
    text = re.sub(r"\bwon't\b", "will not", text, flags=re.I)
    text = re.sub(r"n't\b", " not", text, flags=re.I)
    text = re.sub(r"'(s|ll|re|ve|d|m)\b", " ", text, flags=re.I)
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    merged: list[str] = []
    for t in tokens:  # "°" + "c" → "°c"
        if merged and merged[-1] == "°" and t in ("c", "f"):
            merged[-1] = "°" + t
        else:
            merged.append(t)
    return merged


def _parse_number(token: str) -> float | None:
    if _DIGITS.match(token):
        try:
            return float(token.replace(",", ""))
        except ValueError:
            return None
    return None


def _joins(current: int, value: int, after_scale: bool) -> bool:
    """May number word `value` continue the number `current` spelled so far? "forty" + "two", "hundred" +
    "five" do; "seven" + "eight" ("multiply seven and eight") and "four-seven-eight" are separate numbers."""
    if current == 0 or after_scale:
        return current == 0 or value < 100
    return 20 <= current % 100 <= 90 and current % 10 == 0 and value < 10


def _numbers(tokens: list[str]) -> tuple[list[float], list[int], list[bool], dict[int, float],
                                       set[tuple[str, str, str]]]:
    """Cardinals (with number words combined: 'one hundred forty-four' → 144) and ordinals. A fraction in
    words is read as its digits are ('two thirds' as '2/3': 2 and 3, and the division 2 by 3; 'a quarter'
    as '1/4'), so either spelling matches the other and '6/8' still differs from '3/4'.
    Returns a per-token flag saying which tokens were consumed as numbers, where each number ends (its
    last token's index → its value), and the word fractions' divisions."""
    values: list[float] = []
    ordinals: list[int] = []
    divisions: set[tuple[str, str, str]] = set()
    used = [False] * len(tokens)
    ends: dict[int, float] = {}  # index of a number's last token → its value (for "15 percent")
    total = current = 0
    in_words = after_scale = False
    first_word = last_word = -1  # where the number being spelled began and ended

    def flush() -> None:
        nonlocal total, current, in_words, after_scale
        if in_words:
            if first_word > 0 and tokens[first_word - 1] in lx.ORDINAL_NOUNS:  # "season one" = "first season"
                ordinals.append(total + current)
            else:
                values.append(float(total + current))
                ends[last_word] = float(total + current)
        total = current = 0
        in_words = after_scale = False

    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        before = tokens[i - 1] if i > 0 else ""
        denominator = lx.FRACTION_WORDS.get(tok)
        plural = denominator is not None and tok.endswith("s")
        if before in ("one", "a", "an"):
            numerator = 1 if not plural and (before == "one" or nxt == "of" or tok in lx.FRACTIONS) else None
        elif plural and in_words and last_word == i - 1:
            numerator = total + current  # "two thirds"
        elif plural:
            numerator = _parse_number(before)  # "2 thirds"
        else:
            numerator = 1 if tok in lx.FRACTIONS else None  # "half", "quarter" alone
        if denominator and numerator:
            if plural and not in_words and values and values[-1] == numerator:
                values.pop()  # "2 thirds": the numerator was read as a number already
            total = current = 0  # "two thirds", "one third": the words are the fraction's
            in_words = after_scale = False
            used[i] = True
            if before in ("one", "a", "an"):
                used[i - 1] = True
            values.extend([float(numerator), float(denominator)])
            ends[i] = float(numerator) / denominator
            divisions.add(("div", f"{numerator:g}", str(denominator)))
            continue
        if tok in lx.NUMBER_WORDS and not (tok in ("couple", "pair") and not in_words):
            value = lx.NUMBER_WORDS[tok]
            if in_words and not after_scale and total == 0 and 10 <= current < 30 and value >= 10 \
                    and not _joins(current, value, after_scale):
                current *= 100  # a year said in pairs: "nineteen eighty-four", "twenty twenty"
                after_scale = True
            elif in_words and not _joins(current, value, after_scale):
                flush()
            if not in_words:
                first_word = i
            current += value
            in_words = used[i] = True
            after_scale = False
            last_word = i
        elif tok in lx.NUMBER_SCALES:  # "a billion", "one billion" and "billion": the same number
            if not in_words:
                first_word = i
            scale = lx.NUMBER_SCALES[tok]
            current = max(current, 1) * scale
            if scale >= 1000:
                total += current
                current = 0
            in_words = used[i] = True
            after_scale = scale >= 100
            last_word = i
        elif tok == "and" and in_words and after_scale and nxt in lx.NUMBER_WORDS:  # "a hundred and five"
            used[i] = True
        else:
            flush()
            number = _parse_number(tok)
            if number is not None and before in lx.ORDINAL_NOUNS and number.is_integer():
                ordinals.append(int(number))  # "season 1" = "first season"
                used[i] = True
            elif number is not None:
                values.append(number)
                ends[i] = number
                used[i] = True
            elif tok in lx.ORDINALS and not (tok == "second" and i > 0 and _parse_number(tokens[i - 1])):
                ordinals.append(lx.ORDINALS[tok])
                used[i] = True
            elif tok in lx.ROMAN and i > 0:
                values.append(float(lx.ROMAN[tok]))
                used[i] = True
    flush()
    # "one banana" and "a banana" ask the same thing: a lone 1 carries no information.
    values = [v for v in values if v != 1.0]
    return values, ordinals, used, ends, divisions


def _named_words(text: str) -> set[str]:
    """Words that would be light, phrasing or function words but are written as part of a name: a light
    word capitalised mid-sentence ("Mexico City", "the City of London") and a phrasing or function word
    capitalised after a capitalised word ("The Little Prince"). They are terms there."""
    words = _WORD.findall(text)
    named = {w.lower() for w in words[1:] if w[:1].isupper() and not w.isupper() and w.lower() in lx.LIGHT}
    named |= {w.lower() for i, (prev, w) in enumerate(zip(words, words[1:]))
              if i > 0 and w[:1].isupper() and not w.isupper() and prev[:1].isupper() and prev != "I"
              and (w.lower() in lx.FUNCTION or w.lower() in lx.SCAFFOLD)}
    return named


def _said_words(tokens: list[str]) -> set[str]:
    """Words a request asks to say, translate or spell: "How do you say *hello* in Japanese?". Courtesy
    words there ("hello", "thanks", "please") are the content, not the phrasing."""
    said: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok in ("say", "translate", "spell", "pronounce"):
            for nxt in tokens[i + 1:]:
                if nxt in ("in", "into", "to"):
                    break
                said.add(nxt)
    return said


def _quoted_words(text: str) -> set[str]:
    words: set[str] = set()
    for match in _QUOTED.finditer(text):
        span = next(g for g in match.groups() if g)
        words.update(_canon(t) for t in _tokenize(span))
    return words


def _directions(canon: list[str]) -> tuple[set[str], set[str]]:
    """Which typed terms (units, currencies, languages) are the source and which the target of a
    conversion or translation. 'how many X in a Y' / 'Y to X' / '10 Y in X' → source Y, target X.
    The marker may sit up to two words before the term ('from US dollars', '30 degrees Celsius')."""
    sources: set[str] = set()
    targets: set[str] = set()
    for i, tok in enumerate(canon):
        if tok not in _TYPED:
            continue
        for back in (1, 2, 3):
            if i - back < 0:
                break
            prev = canon[i - back]
            number = _parse_number(prev) is not None or lx.NUMBER_WORDS.get(prev, 0) > 0 or prev in lx.NUMBER_SCALES
            if prev == "from" or prev in _QUANTITY_MARKERS or number:  # "in thirty years" = "in 30 years"
                sources.add(tok)
                break
            if prev in _TARGET_MARKERS and (prev != "in" or back == 1):  # "caffeine in coffee cup": no target
                targets.add(tok)
                break
            if prev in _TYPED:
                break
    return sources, targets


_AUX = frozenset("do does can could should would will to i you we one".split())
_BE = frozenset("is are was were".split())
_YES_NO_LEADS = frozenset("is are was were am can could do does did should will would has have had may must".split())
_WH = frozenset("what which who whom whose when where why how whether".split())
_WH_INTENT = {"who": "person", "whom": "person", "whose": "person", "when": "time", "where": "place",
              "why": "reason", "whether": "yesno"}
_DESCRIBE = frozenset("describe explain define".split())
_TELL = _DESCRIBE | {"tell"}
# "Australia's capital" (an attribute of something, not a definition); not "what's", "it's", "there's"
_POSSESSIVE = re.compile(r"\b(?!(?:what|that|it|there|here|who|where|how|let|he|she)['’]s\b)\w+['’]s\b", re.I)
_PARTICIPLE = re.compile(r"^(?:\w+ed|" + "|".join(sorted(lx.IRREGULAR_PARTICIPLES)) + ")$")


# Intents that ask for different answers. Pairs not listed may share an answer ("How do earthquakes
# happen?" / "Why do earthquakes happen?"); "comparison" conflicts with nothing (the compared terms are
# the terms check's business).
_CONFLICTS = {
    "definition": {"manner", "quantity", "yesno", "reason", "norm", "person", "time", "place", "composition"},
    "composition": {"manner", "quantity", "yesno", "person", "time", "place", "what-is"},
    "manner": {"quantity", "norm", "yesno", "person", "time"},
    "quantity": {"yesno", "person", "place", "reason"},
    "yesno": {"person", "time", "place", "reason", "norm"},
    "reason": {"person", "time", "place"},
    "which": {"quantity"},
    "topic": {"person", "time", "place", "quantity"},
    "appearance": {"person", "time", "place", "quantity", "definition"},
    "event": {"person", "place", "quantity", "definition"},
    "function": {"person", "time", "place", "quantity", "composition"},
    "how-did": {"person", "time", "place", "quantity", "definition", "yesno"},
}
_REMEDY_OPENINGS = frozenset({("should", "i", "do"), ("can", "i", "do"), ("do", "i", "do"), ("should", "you", "do"),
                              ("do", "you", "do"), ("can", "you", "do"), ("helps", "with"), ("helps",), ("cures",)})
# "howto" is a manner ("How do I calculate EBITDA?") that also differs from a reason: "How do I treat a
# migraine?" is not "What causes migraines?" (as "How do earthquakes happen?" is "Why do they happen?")
for _others in _CONFLICTS.values():
    if "manner" in _others:
        _others.add("howto")
_CONFLICTS["howto"] = _CONFLICTS["manner"] | {"reason"}
_INTENT_CONFLICTS = frozenset(frozenset((a, b)) for a, others in _CONFLICTS.items() for b in others)


def _measures(word: str) -> bool:
    """A word naming an amount or a date: "population", "percentage", "year" ("What year …" asks when)."""
    return _canon(word) in _QUANTITY_NOUNS or word in lx.MEASURE_WORDS


def _intent(raw: list[str], text: str) -> str | None:
    """The kind of answer the question's own wording asks for, read from how it starts: "howto" (what
    to do: "How do I calculate EBITDA?", "What should I do if …?"), "manner" (how it is done: "How is mead
    made?"), "definition" ("What is EBITDA?", "What does X mean?", "define X", "X meaning"), "composition"
    ("What is mead made of?"), "norm" ("What is a good cap rate?"), "yesno" ("Do I need gap insurance?"),
    "comparison", "quantity", who/when/where/why ("What causes X?" is a reason), "how-did" ("How did
    Napoleon die?": what happened), "which" ("Which islands make up Japan?", "What is the tallest
    building?": names, not a count), "function" ("What does the liver do?"), "topic" ("What is X
    about?"), "appearance" ("What did X look like?"), "event" ("What happened to X?"), or "what-is" (any
    other "What is …?": "What is the capital of Australia?", which only a composition question
    contradicts). None when the wording does not say: most keyword queries, "Explain X".
    Intents that `_CONFLICTS` lists want different answers ("How do I calculate EBITDA?" is not "What
    is EBITDA?")."""
    words = list(raw)
    for i, w in enumerate(words[:-1]):  # the tokenizer drops "'s": "What's EBITDA?" → what is EBITDA
        if w in ("what", "that") and words[i + 1] not in _BE and re.search(rf"\b{w}['’]s\b", text, re.I):
            words.insert(i + 1, "is")
            break
    if any(w in lx.COMPARISON_WORDS for w in words) or ("or" in words and any(w in lx.CHOICE_VERBS for w in words)):
        return "comparison"  # "X vs Y", "Is X the same as Y?", "Should I use who or whom?"
    if set(zip(words, words[1:])) & lx.COMPOSITION_PAIRS:
        return "composition"  # "What is kombucha made of?" is not "What is kombucha?"
    stripped = True
    explained = False
    while stripped and words:  # polite and request prefixes: "Can you tell me …", "Explain …"
        stripped = False
        for prefix in lx.REQUEST_PREFIXES:
            if tuple(words[:len(prefix)]) == prefix and len(words) > len(prefix):
                explained |= prefix[0] in _DESCRIBE
                words = words[len(prefix):]
                stripped = True
                break
    if not words:
        return None
    prefixed = len(words) < len(raw)  # an embedded question: "Tell me what car insurance costs"
    first = words[0]
    if first == "define" or words[-1] in ("meaning", "definition") or first in ("meaning", "definition"):
        return "definition"  # "define inflation", "ebitda meaning", "definition of a sonnet"
    if explained and first not in _WH:
        return None  # "Explain exception handling" asks for a definition and a how-to alike
    if first in _WH_INTENT:
        return _WH_INTENT[first]
    if first == "how":
        nxt = words[1] if len(words) > 1 else None
        if nxt in lx.HOW_ADJECTIVES:
            return "quantity"
        if nxt == "come":
            return "reason"  # "How come …?"
        if nxt == "did":
            return "how-did"  # "How did Napoleon die?" asks what happened: not a how-to, nor when or where
        if len(words) > 3 and nxt in ("would", "do", "can", "could", "should") and words[3] in _TELL:
            return None  # "How would you describe recursion?": a request, not a how-to
        if len(words) > 2 and nxt in _AUX and words[2] in ("i", "you", "we", "one"):
            return "howto"  # "How do I treat X?" is what to do, which "What causes X?" is not
        if nxt is None or nxt in _AUX or (nxt in _BE and _PARTICIPLE.match(words[-1])):
            return "manner"
        return None
    if any(w in lx.MANNER_NOUNS and i + 1 < len(words) and words[i + 1] in ("to", "for", "of")
           for i, w in enumerate(words)):
        return "manner"
    if first in ("what", "which"):
        if "mean" in words or "meaning" in words:
            return "definition"
        if words[-1] == "about" and len(words) > 3:
            return "topic"  # "What is One Hundred Years of Solitude about?" is not "Who wrote it?"
        if words[-2:] == ["look", "like"]:
            return "appearance"  # "What did Cleopatra look like?" is not "Who was Cleopatra?"
        if len(words) > 2 and words[1] == "happened":
            return "event"  # "What happened to the last tsar?" is not "Who was the last tsar?"
        if tuple(words[1:4]) in _REMEDY_OPENINGS or tuple(words[1:3]) in _REMEDY_OPENINGS:
            return "howto"  # "What should I do if someone faints?" asks what to do, not why people faint
        if words[1:2] in (["cause"], ["causes"], ["caused"]):
            return "reason"  # "What causes inflation?" is "Why does inflation happen?", not "What is inflation?"
        if len(words) > 3 and words[1] in ("do", "does") and words[-1] == "do":
            return "function"  # "What does the liver do?" is not "Where is the liver?"
        if (not prefixed and len(words) > 2 and words[1] not in _BE and words[1] not in lx.FUNCTION
                and not _measures(words[1])):
            return "which"  # "Which islands make up Japan?" names them; "How many islands…" counts them
        if len(words) > 2 and words[1] in _BE:
            rest = words[2:]
            article = rest[0] in ("a", "an", "the")
            if article:
                rest = rest[1:]
            if article and rest and rest[0] in lx.NORM_WORDS:
                return "norm"
            if any(w in ("reason", "reasons", "cause", "causes") for w in rest):
                return "reason"
            if rest and rest[0] in ("name", "names"):
                return "which"  # "What are the names of her children?" is not "How many children…?"
            if (any(w in lx.SUPERLATIVES and w not in ("minimum", "maximum") for w in rest)
                    and not any(_measures(w) for w in rest)):
                return "which"  # "What is the tallest building?" names it; "How tall is the tallest…?" measures
                # ("minimum", "maximum" usually name an amount: "What is the minimum wage?")
            # "What is (the) X?" with nothing after X: a definition; "What is the X of Y", "… in 2020",
            # "What is the largest X", "What is Australia's capital" ask for something else
            bare = not any(w in lx.FUNCTION or w in lx.SUPERLATIVES or w in lx.QUANTITY_NOUNS
                           or _parse_number(w) is not None for w in rest)
            if rest and bare and not _POSSESSIVE.search(text):
                return "definition"
            return "what-is"  # "What is the black box on a plane?": some attribute, at least not its make-up
        return None
    if first in _YES_NO_LEADS:
        if "or" in words and words[words.index("or") + 1:words.index("or") + 2] != ["not"]:
            return None  # a choice: "Should I stretch before or after running?"
        return "yesno"
    if len(words) > 2 and words[-2:] == ["or", "not"]:
        return "yesno"
    return None


def _form_index() -> dict[str, list[tuple[str, tuple[str, ...], bool | None]]]:
    """first token → (form, pattern, kind) for every pattern of `lexicon`'s form lists; kind: True for a
    work to create, False for a pattern that requests its form, None for one that only mentions it."""
    index: dict[str, list[tuple[str, tuple[str, ...], bool | None]]] = {}
    for form, patterns in lx.CREATED_FORMS.items():
        for pattern in patterns:
            index.setdefault(pattern[0], []).append((form, pattern, True))
    for form, (request, mention) in lx.OUTPUT_FORMS.items():
        for pattern in request:
            index.setdefault(pattern[0], []).append((form, pattern, False))
        for pattern in mention:
            index.setdefault(pattern[0], []).append((form, pattern, None))
    return index


_FORM_INDEX = _form_index()


def _forms(raw: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(forms the request asks its answer to take, forms it mentions at all), from `lexicon.OUTPUT_FORMS`
    and `CREATED_FORMS`: "Write a haiku about …" requests a haiku, "autumn leaves haiku" mentions one. A
    work to create is requested only within four words after a verb that asks for it."""
    requested, mentioned = set(), set()
    for i, token in enumerate(raw):
        for form, pattern, created in _FORM_INDEX.get(token, ()):
            if tuple(raw[i:i + len(pattern)]) != pattern:
                continue
            mentioned.add(form)
            if created is False or (created and any(w in lx.CREATE_VERBS for w in raw[max(0, i - 4):i])):
                requested.add(form)
    return frozenset(requested), frozenset(mentioned)


def _roles(raw: list[str], canon: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(verbs whose subject "what"/"who" is, verbs whose object it is): "What eats koalas?" → ({eat}, {}),
    "What do koalas eat?" → ({}, {eat}) — there every content word after the subject is a candidate verb.
    Verbs are kept in every form they may be ("fought": fought, fight). The same words with the roles
    swapped ask the opposite question, which the terms check cannot see."""
    none: frozenset[str] = frozenset()
    if len(raw) < 3 or raw[0] not in ("what", "who", "whom") or len(canon) != len(raw):
        return none, none
    if raw[1] in ("do", "does", "did"):
        is_object, verbs = True, [(w, c) for w, c in zip(raw[3:], canon[3:]) if w not in lx.FUNCTION]
    elif raw[1].isalpha() and raw[1] not in _YES_NO_LEADS and raw[1] not in lx.FUNCTION:
        is_object, verbs = False, [(raw[1], canon[1])]
    else:
        return none, none
    table = synonyms.table()
    forms = frozenset(f for w, c in verbs for f in (c, *(table.lemmas(w) if table else ())))
    return (none, forms) if is_object else (forms, none)


_ORDER_WORDS = frozenset({"to", "into", "over", "onto", "than"})


def _ordered_pairs(canon: list[str], content: set[str]) -> set[tuple[str, str]]:
    """(a, b) for every 'a … to/into/onto/over/than … b', a and b in `content` (terms and light words):
    'convert a string to an integer', 'from London to Paris', 'paint over wallpaper', 'is a dolphin
    heavier than a shark' — the same two words the other way round ask the opposite question. ('in' is
    not one: '10 miles in km' and 'km in 10 miles' are one conversion, read by the typed-unit check.)"""
    pairs = set()
    for i, tok in enumerate(canon):
        if tok not in _ORDER_WORDS:
            continue
        # every term on each side: "JSON to a Python dictionary" is (json, python) and (json, dict), so
        # "a Python dictionary to JSON" reads as its reverse whichever word the other side puts last
        lefts = {c for c in canon[max(0, i - 3):i] if c in content}
        rights = {c for c in canon[i + 1:i + 4] if c in content}
        pairs.update((left, right) for left in lefts for right in rights if left != right)
    return pairs


@lru_cache(maxsize=65536)
def _phrased(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tokens, tokens with multi-word phrases rewritten): shared by `analyse` and `surface`, which
    would otherwise tokenize every new text twice on the hit path."""
    raw = _tokenize(text)
    return tuple(raw), tuple(_apply_phrases(raw))


@lru_cache(maxsize=65536)
def analyse(text: str) -> Facts:
    raw_tuple, phrased = _phrased(text)
    raw = list(raw_tuple)
    language = _language(raw, text)
    foreign = lx.LANGUAGE_STOPWORDS.get(language, frozenset()) if language not in (None, "en") else frozenset()
    tokens = list(phrased)
    values, ordinals, used, ends, divisions = _numbers(tokens)
    # what each percent sign belongs to ("15% of 80" ≠ "what percent of 80 is 15"); "as a percentage" alone, none
    percents = tuple(sorted(ends[i - 1] for i, tok in enumerate(tokens) if tok == "percent" and i - 1 in ends))
    if values and any(t in ("c", "f") for t in tokens):  # "100 f to c", not "C-14"
        tokens = [{"c": "celsius", "f": "fahrenheit"}.get(t, t)
                  if i == 0 or used[i - 1] or tokens[i - 1] in ("degrees", "degree", "to", "in", "into") else t
                  for i, t in enumerate(tokens)]
    canon = [_canon(t) for t in tokens]
    quoted = _quoted_words(text)
    terms: set[str] = set()
    light: set[str] = set()
    named = _named_words(text)
    negations = 0
    # "the largest desert" is "the largest desert in the world": a superlative's default scope is the
    # world, one light word however it is named ("on Earth", "on the planet", "globally").
    superlative = any(t in lx.SUPERLATIVES for t in tokens)
    if superlative:
        canon = ["world" if t in lx.WORLD_SCOPE else c for t, c in zip(tokens, canon)]
    said = _said_words(tokens)
    for i, (tok, c, was_number) in enumerate(zip(tokens, canon, used)):
        if was_number:
            continue
        if tok in lx.NEGATORS or c in lx.NEGATORS:
            # "97 prime or not?", "and if not, how do they differ?", "not the same as": no claim negated
            if not (tok == "not" and (tokens[i - 1:i] in (["or"], ["if"]) or tokens[i + 1:i + 3] == ["the", "same"])):
                negations += 1
            continue
        if c in quoted or tok in named or (tok in said and tok in lx.COURTESY):
            terms.add(c)
        elif tok in lx.FUNCTION or c in lx.FUNCTION or c in _QUESTION_TYPES or c == "how" or tok in foreign:
            continue
        elif tok in lx.SCAFFOLD or c in lx.SCAFFOLD:
            continue
        elif tok in lx.LIGHT or c in lx.LIGHT or light_stem(tok) in lx.LIGHT or (superlative and c == "world"):
            light.add(c)
        elif c in _POLE_OF:
            terms.add(c)
        elif len(c) > 1 or c.isdigit() or (c.isalpha() and c not in _CLITICS):  # vitamin K ≠ vitamin C
            terms.add(c)
    question = frozenset(_QUESTION_TYPES[c] for c in canon if c in _QUESTION_TYPES)
    intent = _intent(raw, text)
    if any(c in _QUANTITY_NOUNS for c in canon):
        question |= {"quantity"}
    if any(t in lx.AGENT_NOUNS for t in tokens):
        question |= {"person"}  # "saxophone inventor" asks who, not when
    if any(t in ("date", "dates", "year") for t in tokens):
        question |= {"time"}  # "titanic sinking date" asks when, not why or where
    sources, targets = _directions(canon)
    forms, mentioned_forms = _forms(raw)
    subject_of, object_of = _roles(raw, canon)
    return Facts(
        words=frozenset(canon) | frozenset(tokens),
        terms=frozenset(terms),
        light=frozenset(light),
        numbers=tuple(sorted(values)),
        percents=percents,
        ordinals=tuple(sorted(ordinals)),
        negated=negations % 2 == 1,
        poles=frozenset(c for c in canon if c in _POLE_OF),
        question=question,
        sources=frozenset(sources),
        targets=frozenset(targets),
        ordered=frozenset(_ordered_pairs(canon, terms | light)),
        language=language,
        intent=intent,
        subject_of=subject_of,
        object_of=object_of,
        operations=frozenset((_OPERATOR[m.group(2).strip().lower()], m.group(1), m.group(3))
                             for m in _OPERATION.finditer(text)) | divisions,
        forms=forms,
        mentioned_forms=mentioned_forms,
    )


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


@lru_cache(maxsize=65536)
def surface(text: str) -> tuple[dict[str, str], frozenset[str]]:
    """canonical term → the word as written (lower case), and the words written capitalised mid-sentence
    or in capitals (entity-like: 'Java', 'NATO')."""
    mapping: dict[str, str] = {}
    for tok in _phrased(text)[1]:
        mapping.setdefault(_canon(tok), tok)
    capitalised = set()
    for i, match in enumerate(_WORD.finditer(text)):
        word = match.group(0)
        if (i > 0 and word[:1].isupper()) or (len(word) >= 2 and word.isupper()):
            capitalised.add(word.lower())
    return mapping, frozenset(capitalised)


def _common_words(text: str, canon_terms) -> dict[str, tuple[str, bool]]:
    """canonical term → (written word, written capitalised), for the terms WordNet may speak for: single
    words, not units, languages or the lexicon's multi-word canonical forms ('new_york')."""
    written, capitalised = surface(text)
    out = {}
    for term in canon_terms:
        word = written.get(term)
        if word and word.isalpha() and word.isascii() and term not in _TYPED and "_" not in term:
            out[term] = (word, word in capitalised)
    return out


@lru_cache(maxsize=65536)
def _synonym_candidates(text: str) -> tuple[tuple[str, bool], ...]:
    """The words of `text` that may be a WordNet synonym of a term the other text has."""
    facts = analyse(text)
    return tuple(_common_words(text, facts.terms | facts.light).values())


def _synonym_found(term: str, text: str, other: str) -> bool:
    """Does `other` hold a WordNet synonym of `term` (a term of `text` that `other` lacks)?"""
    word = _common_words(text, (term,)).get(term)
    if word is None:
        return False
    return any(synonyms.synonymous(word[0], candidate, word[1], name)
               for candidate, name in _synonym_candidates(other))


@lru_cache(maxsize=65536)
def _compounds(text: str) -> tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]]]:
    """(the words as written, every two neighbours joined, each word → the joins it is part of): "time
    zone" makes "timezone", "vs code" "vscode", so either spelling of a compound finds the other."""
    raw = _phrased(text)[0]
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


def learned_model():
    """The learned stage: the cross-encoder if its file is there and loads, else the trees; None if
    neither loads. Either has `prob(query, cached, rules_ok=...) -> p`, `threshold` (serve a pair the rules
    refused for unmatched words) and `veto_cut` (refuse a pair the rules passed)."""
    from cache import cross_encoder, verifier_model

    if cross_encoder.MODEL_PATH.exists():
        model = cross_encoder.shared_model()
        if model is not None:
            return model
    return verifier_model.shared_model()


def _named_light(a: Facts, b: Facts) -> frozenset[str]:
    """`a`'s light words less the person word a who-question implies, when both texts ask "who" and `b`
    names no person: "Who is the *author* of Harry Potter?" adds nothing to "Who wrote the Harry Potter
    *books*?", but "Who was the first *woman* in space?" still swaps a word of "… the first *man* …"."""
    if a.intent == b.intent == "person" and not (b.light & lx.PERSON_LIGHT):  # both ask "who" in words
        return a.light - lx.PERSON_LIGHT
    return a.light


def verify_rules(query: str, cached: str) -> Verdict:
    """The lexical rules alone (the guard before the learned stage; kept for comparison and tests)."""
    a, b = analyse(query), analyse(cached)
    if a.language and b.language and a.language != b.language:
        return Verdict(False, "language", f"{a.language} vs {b.language}")
    if a.numbers != b.numbers:
        return Verdict(False, "numbers", f"{list(a.numbers)} vs {list(b.numbers)}")
    if a.percents != b.percents:
        return Verdict(False, "numbers", f"percent of {list(a.percents)} vs {list(b.percents)}")
    if a.ordinals != b.ordinals:
        return Verdict(False, "numbers", f"ordinals {list(a.ordinals)} vs {list(b.ordinals)}")
    for op, left, right in a.operations:
        if (op, right, left) in b.operations and (op, left, right) not in b.operations:
            return Verdict(False, "numbers", f"{left} {op} {right} vs {right} {op} {left}")
    if a.negated != b.negated:
        return Verdict(False, "negation")
    for word in a.poles:
        for opposite in _POLE_OF[word]:
            if opposite in b.poles and not (word in b.poles and opposite in a.poles):
                return Verdict(False, "poles", f"{word} vs {opposite}")
    if a.question and b.question and not (a.question & b.question):
        return Verdict(False, "question", f"{sorted(a.question)} vs {sorted(b.question)}")
    if frozenset((a.intent, b.intent)) in _INTENT_CONFLICTS:
        return Verdict(False, "intent", f"{a.intent} vs {b.intent}")
    if (a.forms - b.mentioned_forms) or (b.forms - a.mentioned_forms):
        return Verdict(False, "form", f"{sorted(a.forms)} vs {sorted(b.forms)}")
    if (a.targets & b.sources) - b.targets or (a.sources & b.targets) - b.sources:
        return Verdict(False, "direction", f"{sorted(a.sources)}→{sorted(a.targets)} vs "
                                           f"{sorted(b.sources)}→{sorted(b.targets)}")
    for left, right in a.ordered:
        if (right, left) in b.ordered and (left, right) not in b.ordered:
            return Verdict(False, "direction", f"{left}→{right} vs {right}→{left}")
    swapped = (a.subject_of & b.object_of) | (a.object_of & b.subject_of)  # a text has one role or none
    if swapped:
        return Verdict(False, "direction", f"subject and object of '{min(swapped)}' swapped")
    missing, extra = unmatched_terms(query, cached)
    if missing or extra:
        return Verdict(False, "terms", f"only in query {missing}, only in cached {extra}")
    a_light, b_light = _named_light(a, b), _named_light(b, a)
    if (a_light - b.words) and (b_light - a.words):
        return Verdict(False, "light", f"{sorted(a_light - b.words)} vs {sorted(b_light - a.words)}")
    return Verdict(True)
