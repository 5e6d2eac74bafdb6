"""What a text pins down (`Facts`, computed once per text by `analyse`): its terms and light words,
numbers, negation, poles, question types, intent, forms, conversion direction and word order. The
near-miss guard (`cache.guard`) compares two texts' facts."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from cache import lexicon as lx
from cache import synonyms
from cache.intents import _PARTICIPLE, acts_of, forms_of, intent_of, roles_of, self_role
from cache.numerals import (OPERATION, OPERATOR, RANGE, VARIABLE_OPERATION, coordinate_points, expression_operators,
                            function_calls, read_numbers, trailing_zero_decimals)
from cache.wording import (CLOCK_TOKEN, QUANTITY_NOUNS, asking_sentence, canonical, code_spans, language_of,
                           light_stem, named_words, parse_number, phrased_tokens, powers_in_symbols, quoted_spans,
                           quoted_words, said_words, tokenize, year_spans_read)

QUESTION_TYPES = {"who": "person", "whom": "person", "when": "time", "where": "place", "why": "reason",
                  "cause": "reason", "how_many": "quantity"}
_UNIT_WORDS = frozenset("""
mile kilometer meter centimeter millimeter inch foot yard pound ounce kilogram gram milligram liter
milliliter gallon cup teaspoon tablespoon calorie celsius fahrenheit kelvin dollar euro yen franc yuan rupee
mile_per_hour kilometer_per_hour meter_per_second light_year light_second hour minute second day week month year stick
acre hectare quart pint stone ton tonne byte kilobyte megabyte gigabyte terabyte kilobit megabit gigabit
joule watt kilowatt kilowatt_hour horsepower btu radian carat barrel bushel furlong fathom knot decade
century millennium millisecond microsecond nanosecond bitcoin satoshi penny
psi bar kpa atm mmhg mbps gbps kbps volt amp ampere ohm hertz hz mah newton lumen lux
""".split())
_UNIT_WORDS |= frozenset(canonical(w) for w in _UNIT_WORDS)
LANGUAGE_NAMES = frozenset("""
english french german spanish italian portuguese dutch japanese chinese mandarin cantonese korean russian
arabic hindi swedish norwegian danish finnish polish greek turkish hebrew latin
""".split())
TYPED = _UNIT_WORDS | LANGUAGE_NAMES
_PLACE_NOUNS = frozenset("city cities town towns country countries state states continent continents".split())
_TARGET_MARKERS = frozenset({"to", "into", "in", "how_many"})
_QUANTITY_MARKERS = frozenset({"a", "an", "one", "per", "each"})


@dataclass(frozen=True, slots=True)
class Facts:
    """What a text pins down, computed once per text (cached)."""

    words: frozenset[str]  # every canonical token, function words included
    terms: frozenset[str]  # specific terms that must appear on the other side
    light: frozenset[str]
    light_counts: tuple[tuple[str, int], ...]  # how often each light word is written ("US state … state parks")
    term_counts: tuple[tuple[str, int], ...]  # how often each term is written ("a Canadian … file Canadian taxes")
    every: frozenset[str]  # terms asked for in full: "all the drummers" (`_every`)
    manner: frozenset[str]  # what "the X way to …" optimises: fast, easy, cheap, safe (`_manner`)
    singular: frozenset[str]  # terms named as one: "the drummer", not "drummers" nor "every drummer" (`_singular`)
    numbers: tuple[float, ...]
    percents: tuple[float, ...]
    ordinals: tuple[int, ...]
    counted: frozenset[tuple[str, float]]  # what a number counts, the word after it: "for 4 people" → ("people", 4)
    clocks: tuple[str, ...]  # times of day on the 24-hour clock, as `wording.tokenize` writes them ("clock2145")
    negated: bool
    negated_words: frozenset[str]  # the content words a negation stands before: "hear no thunder" → thunder
    poles: frozenset[str]
    question: frozenset[str]
    stage_asked: str | None  # "age" (how old, at what age) or "when" of what is done (`_stage_asked`)
    sources: frozenset[str]
    targets: frozenset[str]
    ordered: frozenset[tuple[str, str]]
    ends: tuple[frozenset[str], frozenset[str]]  # (origins, destinations): "from X", "to Y"
    clock_places: frozenset[str]  # where a time of day is told: "9am in London", "3pm GMT" (`_clock_places`)
    places_in: frozenset[str]  # the terms right after "in" / "to" / "into": where, not who (`_places_in`)
    eating: tuple[frozenset[str], frozenset[str]] | None  # (who eats, what): "Can dogs eat grapes?" (`_eating`)
    language: str | None
    intent: str | None  # the kind of answer the wording asks for (`intent_of`)
    acts: frozenset[str]  # what a request asks to do to a thing: create, read, count, delete, change (`acts_of`)
    amount: str | None  # what a how-much question measures: count, measure, cost, amount (`_amount`)
    agent_asked: bool  # asks who through an agent noun alone, no "who" written: "odyssey author"
    operations: frozenset[tuple[str, str, str]]  # (div|pow|sub|ratio, left, right): "4/3" → ("div", "4", "3")
    sides: tuple[str, ...]  # the order in which the asker's side ("we", "our") and another's ("they") are named
    owners: frozenset[tuple[str, str]]  # (thing, whose): "my neighbor's house" → (neighbor, me), (hous, neighbor)
    points: frozenset[tuple[float, ...]]  # coordinates as written: "(3, 2)" → (3.0, 2.0) (`coordinate_points`)
    operators: tuple[str, ...]  # a written expression's operators in order: "2x + 5 = 15" → ("+", "=")
    calls: frozenset[tuple[str, str]]  # named functions and their arguments: "sin(x^2)" → ("sin", "x^2")
    percent_asks: str | None  # what a percentage question asks for: the part, the whole or what is left
    code: tuple[str, ...]  # code spans as written: "What does `typeof null` return?" → ("typeof null",)
    decimals: tuple[str, ...]  # decimals written with a final zero: "Python 3.10" → ("3.10",)
    subject_of: frozenset[str]  # verbs whose subject the question word is: "What eats koalas?" (`roles_of`)
    object_of: frozenset[str]  # verbs whose object it is: "What do koalas eat?"
    self_role: str | None  # the asker as "subject" ("What should I get my wife?") or "object" (`self_role`)
    quoted: tuple[str, ...]  # quoted spans taken literally ("spell 'necessarily'"); empty for a meaning question
    forms: frozenset[str]  # the forms the answer is asked to take: poem, summary, brief… (`forms_of`)
    mentioned_forms: frozenset[str]  # forms the text names at all ("ocean poem")


# A pole is matched on the canonical form analyse() compares ("inside" → "insid", "decrease" → "lower");
# the word as listed is kept too, for tokens the canonicaliser leaves as they are.
POLE_OF: dict[str, set[str]] = {}
for _a, _b in lx.POLES:
    for _x, _y in ((_a, _b), (canonical(_a), canonical(_b))):
        if _x != _y:
            POLE_OF.setdefault(_x, set()).add(_y)
            POLE_OF.setdefault(_y, set()).add(_x)

_CLITICS = frozenset("s t d m ll re ve".split())  # what is left of "it's", "don't" when an apostrophe is odd
# A question about what a quoted text means, where its inflection does not matter (`Facts.quoted`)
_MEANING_WORDS = frozenset("mean means meant meaning definition define explain phrase idiom expression".split())


def _directions(canon: list[str]) -> tuple[set[str], set[str]]:
    """Which typed terms (units, currencies, languages) are the source and which the target of a
    conversion or translation. 'how many X in a Y' / 'Y to X' / '10 Y in X' → source Y, target X.
    The marker may sit up to two words before the term ('from US dollars', '30 degrees Celsius')."""
    sources: set[str] = set()
    targets: set[str] = set()
    for i, tok in enumerate(canon):
        if tok not in TYPED:
            continue
        for back in (1, 2, 3):
            if i - back < 0:
                break
            prev = canon[i - back]
            number = parse_number(prev) is not None or lx.NUMBER_WORDS.get(prev, 0) > 0 or prev in lx.NUMBER_SCALES
            if prev == "from" or prev in _QUANTITY_MARKERS or number:  # "in thirty years" = "in 30 years"
                sources.add(tok)
                break
            if prev in _TARGET_MARKERS and (prev != "in" or back == 1):  # "caffeine in coffee cup": no target
                targets.add(tok)
                break
            if prev in TYPED:
                break
    return sources, targets


# "after"/"before" too: "a drink after breastfeeding" is the reverse of "breastfeed after a drink"
_ORDER_WORDS = frozenset({"to", "into", "over", "onto", "than", canonical("after"), canonical("before")})


def _named_scaffold(tokens: list[str], canon: list[str]) -> set[str]:
    """Phrasing words that name a thing where an order word points at them: "merge my feature branch into
    *main*" is the reverse of "merge *main* into my feature branch"."""
    named = {c for i, (t, c) in enumerate(zip(tokens, canon))
             if (t in lx.SCAFFOLD or c in lx.SCAFFOLD) and t not in lx.FUNCTION
             and (tokens[i - 1:i] in (["into"], ["onto"]) or tokens[i + 1:i + 2] in (["into"], ["onto"]))}
    # "list" is a thing, not the verb, on either side of a conversion: "list to array", "array to a list"
    # (not "how to list files")
    for i, t in enumerate(tokens):
        if t not in ("list", "lists"):
            continue
        before = tokens[max(0, i - 2):i]
        if tokens[i + 1:i + 2] in (["to"], ["into"]) or (
                before[-2:-1] in (["to"], ["into"]) and before[-1:] in (["a"], ["the"])) or (
                before[-1:] in (["to"], ["into"]) and len(before) >= 2
                and before[-2] not in lx.FUNCTION and before[-2] not in lx.SCAFFOLD):
            named.add(canon[i])
    return named


def _ordered_pairs(canon: list[str], content: set[str]) -> set[tuple[str, str]]:
    """(a, b) for every 'a … to/into/onto/over/than … b', a and b in `content` (terms and light words):
    'convert a string to an integer', 'from London to Paris', 'paint over wallpaper', 'is a dolphin
    heavier than a shark' — the same two words the other way round ask the opposite question. ('in' is
    not one: '10 miles in km' and 'km in 10 miles' are one conversion, read by the typed-unit check.)"""
    pairs = set()
    for i, tok in enumerate(canon):
        if tok not in _ORDER_WORDS:
            continue
        if tok == "to" and canon[i - 1:i] == ["accord"]:
            continue  # "according to the FSI" points nowhere
        # every term on each side: "JSON to a Python dictionary" is (json, python) and (json, dict), so
        # "a Python dictionary to JSON" reads as its reverse whichever word the other side puts last
        lefts = {c for c in canon[max(0, i - 3):i] if c in content}
        rights = {c for c in canon[i + 1:i + 4] if c in content}
        pairs.update((left, right) for left in lefts for right in rights if left != right)
    return pairs


def _substitutions(tokens: list[str], canon: list[str], content: set[str]) -> set[tuple[str, str]]:
    """(new, old) for a swap of one thing for another: "X instead of Y", "X in place of Y", "substitute
    X for Y", "replace / swap / exchange Y with/for X", "X … to replace Y" — "vegetable oil instead of olive oil" is the
    reverse of "olive oil instead of vegetable oil" (read like the order words above); a number names a
    side too ("replace a 3 prong outlet with a 2 prong" is the reverse of "… a 2 prong with a 3 prong")."""
    def near(lo: int, hi: int) -> set[str]:
        return {c for c in canon[max(lo, 0):hi] if c in content or parse_number(c) is not None}

    pairs = set()
    for i, tok in enumerate(tokens):
        if tok == "instead" and tokens[i + 1:i + 2] == ["of"]:
            new, old = near(i - 3, i), near(i + 2, i + 5)
        elif tok == "place" and tokens[i - 1:i] == ["in"] and tokens[i + 1:i + 2] == ["of"]:
            new, old = near(i - 4, i - 1), near(i + 2, i + 5)
        elif tok in ("substitute", "replace", "swap", "exchange"):
            link = "with" if tok == "replace" else "for"
            j = next((k for k in range(i + 2, min(len(tokens), i + 6)) if tokens[k] == link), None)
            if j is None and tok == "replace" and tokens[i - 1:i] == ["to"]:
                new, old = near(i - 6, i - 1), near(i + 1, i + 6)  # "how much soda do I use to replace powder"
                pairs.update((a, b) for a in new - old for b in old - new)
                continue
            if j is None:
                continue
            first, second = near(i + 1, j), near(j + 1, j + 5)  # "for 1 tsp baking soda"
            new, old = (first, second) if tok == "substitute" else (second, first)
        else:
            continue
        pairs.update((a, b) for a in new - old for b in old - new)  # what both sides name is no side
    return pairs


def _plural(token: str, canon: str) -> bool:
    return token.endswith("s") and canonical(token[:-1]) == canon


MANNERS = {"fastest": "fast", "quickest": "fast", "easiest": "easy", "simplest": "easy", "cheapest": "cheap",
            "safest": "safe", "shortest": "short"}


def _manner(tokens: list[str]) -> frozenset[str]:
    """What a "the X way / route / method" question optimises: "the fastest way to Heathrow" and "the
    easiest way …" have different answers (easiest and simplest are one; best is no manner at all)."""
    return frozenset(MANNERS[t] for t, nxt in zip(tokens, tokens[1:] + [""])
                     if t in MANNERS and nxt in ("way", "ways", "route", "method", "option"))


def _every(tokens: list[str], canon: list[str], terms: set[str]) -> frozenset[str]:
    """The terms a text asks for in full: a plural right after "all (the)" (within three words): "Who
    were all the drummers the Beatles had?" wants a list, "Who was the drummer?" one name. ("every" and
    "each" are left out: "each month", "every line" read as "per month", "line by line".)"""
    found = set()
    for i, tok in enumerate(tokens):
        if tok == "all":
            for j in range(i + 1, min(len(tokens), i + 4)):  # past modifiers: "all Docker volumes"
                if canon[j] in terms and _plural(tokens[j], canon[j]):
                    found.add(canon[j])
                    break
    return frozenset(found)


def _singular(tokens: list[str], canon: list[str], terms: set[str]) -> frozenset[str]:
    """The terms a text names as one: never written in the plural nor counted in full ("every
    occurrence", "each tab", "all the …")."""
    many = {c for i, (t, c) in enumerate(zip(tokens, canon)) if c in terms and
            (_plural(t, c) or {"every", "each", "all"} & set(tokens[max(0, i - 3):i]))}
    return frozenset(c for c in canon if c in terms and c not in many)


def _data_noun(tokens: list[str], i: int) -> bool:
    """"list" as a thing, not the request: "convert a list to a string" (not "give me a list of …",
    "list all files")."""
    before = tokens[i - 1] if i > 0 else ""
    if tokens[i] == "lists":
        return before not in ("that", "which", "who", "it", "command")  # "SQL that lists …" is the verb
    return tokens[i] == "list" and before in ("a", "the", "my", "this", "python") and tokens[i + 1:i + 2] != ["of"]


_LENGTH_UNITS = frozenset(canonical(w) for w in "page word line sentence paragraph syllable".split())  # of a text
_MEASURE_UNITS = _UNIT_WORDS | _LENGTH_UNITS
_MONEY_WORDS = frozenset("cost costs price priced pay paid charge charges fee fees spend expensive cheap $ € £".split())
# Amounts that answer differently: a count is not a length or a duration, and neither is a price.
AMOUNT_CONFLICTS = frozenset(map(frozenset, (("count", "measure"), ("count", "cost"), ("cost", "measure"),
                                             ("cost", "amount"))))


def _amount(raw: list[str]) -> str | None:
    """What a how-much question measures: "count" (how many episodes, the number of episodes), "measure"
    (how long, how many minutes or pages), "cost" (how much … cost/price/pay) or "amount" (any other how much)."""
    for i, (word, nxt) in enumerate(zip(raw, raw[1:])):
        if (word, nxt) == ("number", "of"):
            nxt = "many"  # "number of questions" is how many questions
        elif word != "how" or nxt not in ("many", "much", "long"):
            continue
        units = {canonical(w) for w in raw[i + 2:i + 4]}  # "how many (fluid) ounces"
        if nxt == "long" or (nxt == "many" and units & _MEASURE_UNITS):
            return "measure"
        if nxt == "many":
            return "count"
        return "cost" if any(w in _MONEY_WORDS for w in raw) else "amount"
    return None


# Words with which "from" tells two things apart rather than naming an origin: "How is jelly different
# from jam?" (the guard's origin-swap check does not apply to such texts)
CONTRAST = frozenset("differ differs different difference distinguish distinguishes distinguished separate "
                     "separates tell apart distinct differentiate differentiates".split())


def _ends(canon: list[str], content: set[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(origins, destinations): the first term after each "from", and after each "to"/"into"."""
    origins, destinations = set(), set()
    for i, tok in enumerate(canon):
        if tok in ("from", "to", "into"):
            following = [c for c in canon[i + 1:i + 4] if c in content]
            if following:
                (origins if tok == "from" else destinations).add(following[0])
    return frozenset(origins), frozenset(destinations)


_TIME_ZONES = frozenset("utc gmt bst cet cest eet wet est edt cst cdt mst mdt pst pdt akst hst ist jst kst aest aedt "
                        "nzst nzdt".split())
_CALENDAR_WORDS = frozenset("monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight yesterday "
                            "january february march april maymonth june july august september october november "
                            "december".split())


def _clock_places(tokens: list[str], canon: list[str], content: set[str], text: str) -> frozenset[str]:
    """The place or zone a time of day is told in, the term right after it when it names one (a word written
    capitalised, a time zone, or one followed by "time"): "9am in London", "9am London time", "3pm GMT".
    The other place named is where it is asked for ("If it's 9am in London, what time is it in New York?"
    ≠ "If it's 9am in New York, … in London?"); "at 9am tomorrow" names no place. With no such term after
    it, a keyword query's place right before it: "NYC 9am to London time"."""
    places = set()
    capitalised = None
    for i, tok in enumerate(canon):
        if CLOCK_TOKEN.match(tok):
            at = next((j for j in range(i + 1, min(i + 4, len(canon))) if canon[j] not in ("in", "at", "the")), None)
            if at is None or canon[at] not in content:
                at = i - 1
                if at < 0 or canon[at] not in content:
                    continue
            if capitalised is None:
                capitalised = {w.lower() for w in re.findall(r"\b[A-Z]\w*", text)}
            word = canon[at]
            if tokens[at] in _CALENDAR_WORDS:
                continue  # "9am Tuesday" says when, not where
            if word in _TIME_ZONES or tokens[at + 1:at + 2] == ["time"] or word in capitalised or "_" in word:
                places.add(word)
    return frozenset(places)


_EAT, _SAFE = canonical("eat"), canonical("safe")


def _eating(canon: list[str], terms: set[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    """(who eats, what is eaten) as "Can dogs eat grapes?" and "Are grapes safe for dogs?" both say it: the
    terms before and after "eat", or after and before "safe for" (three words each way)."""
    def near(lo: int, hi: int) -> frozenset[str]:
        return frozenset(c for c in canon[max(lo, 0):hi] if c in terms and c not in (_EAT, _SAFE))

    for i, c in enumerate(canon):
        if c == _EAT:
            eater, food = near(i - 3, i), near(i + 1, i + 4)
        elif c == _SAFE and canon[i + 1:i + 2] == ["for"]:
            eater, food = near(i + 2, i + 5), near(i - 3, i)
        else:
            continue
        if eater and food:
            return eater, food
    return None


# countries whose people the lexicon names by an adjective ("Americans", "a Canadian citizen")
COUNTRIES = frozenset(canonical(w) for w in """
usa uk england canada australia austria mexico brazil india switzerland ireland scotland belgium argentina
chile peru colombia egypt nigeria kenya israel iraq pakistan malaysia singapore cuba jamaica morocco germany
japan china italy spain russia france
""".split())


def _places_in(tokens: list[str], canon: list[str], content: set[str]) -> frozenset[str]:
    """The countries right after "in", "to" or "into" (a "the" between): where someone is, or goes. Two
    texts that both name two countries put a different one there when the people and the place trade
    roles: "Can Americans live in Canada?" ≠ "Can a Canadian citizen live in the US?" (the guard)."""
    found = set()
    for i, tok in enumerate(canon[:-1]):
        if tok in ("in", "to", "into"):
            j = i + 2 if canon[i + 1] == "the" else i + 1
            adjective = (j == i + 1 and tokens[j] != canon[j] and not tokens[j].startswith(canon[j])
                         and j + 1 < len(canon) and canon[j + 1] in content)  # "in US / Canadian elections"
            if j < len(canon) and canon[j] in COUNTRIES and canon[j] in content and not adjective:
                found.add(canon[j])
    return frozenset(found)


# the peoples whose adjective is their language's name ("a German licence"), as the country they name
_COUNTRY_OF_LANGUAGE = {canonical(language): canonical(country) for language, country in (
    ("german", "germany"), ("french", "france"), ("japanese", "japan"), ("chinese", "china"),
    ("italian", "italy"), ("spanish", "spain"), ("russian", "russia"), ("english", "england"))}


def countries_named(words: frozenset[str]) -> frozenset[str]:
    """`words` with each people's language read as its country (for the places check: "drive in the US with
    a German licence" names Germany)."""
    return frozenset(_COUNTRY_OF_LANGUAGE.get(w, w) for w in words)


_NOT_A_NAME = frozenset(canonical(w) for w in "capital inner host port home big small major large old new".split())


_CITY = canonical("city")


def _named_city(tokens: list[str], terms: set[str]) -> bool:
    """"X city" after a place name, however written: "mexico city" is not "mexico" ("a walkable city",
    "capital city", "inner city" name no place; a place is a word WordNet writes capitalised)."""
    for before, tok in zip(tokens, tokens[1:]):
        if tok != "city":
            continue
        c = canonical(before)
        if c in terms and c not in POLE_OF and c not in _NOT_A_NAME and before not in lx.SUPERLATIVES:
            table = synonyms.table()
            if table is not None and table.senses(before, name=True):
                return True
    return False


# "the country Georgia" (Tbilisi), not the US state: "country" before a name says which namesake is meant, so
# it is a term there. Only country/nation: writers add "the city of Chicago", "the novel War and Peace", "the
# state of Hawaii" to paraphrases freely, and which names have namesakes is knowledge the guard lacks
_CLASS_BEFORE_NAME = re.compile(r"\bthe (country|nation)(?: of)? [A-Z]")


def _named_class(text: str) -> set[str]:
    return {canonical(m.group(1)) for m in _CLASS_BEFORE_NAME.finditer(text)}


_RATE_UNITS = frozenset({"day", "week", "month", "year", "night", "hour", "minute"})
_RATE_WORDS = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annual": "year",
               "annually": "year", "hourly": "hour", "nightly": "night"}
_KIND_WORDS = frozenset("species kinds types varieties breeds".split())


def _ends_by_whom(raw: list[str]) -> bool:
    """A keyword query that ends on a participle and "by" asks by whom: "penicillin discovered by", "hamlet
    written by" (a question word first says what it asks itself)."""
    return len(raw) > 2 and raw[-1] == "by" and raw[0] not in lx.QUESTION_WORDS and bool(_PARTICIPLE.match(raw[-2]))


def _rates(raw: list[str]) -> set[str]:
    """"per year", "every day", "each month", "daily", "annual" → per_year, … ("a day" is too often not a
    rate: "a day on Mars", "a refund a week after purchase")."""
    found = set()
    for i, tok in enumerate(raw):
        if tok in ("per", "every", "each") and i + 1 < len(raw) and canonical(raw[i + 1]) in _RATE_UNITS:
            found.add("per_" + canonical(raw[i + 1]))
        elif tok in _RATE_WORDS:
            found.add("per_" + _RATE_WORDS[tok])
    return found


_PERCENT_WHOLE = re.compile(r"(?:%|\bpercent)\s+of\s+what\b", re.I)
_PERCENT_OFF = re.compile(r"(?:%|\bpercent)\s+(?:off|discount)\b", re.I)


_PERCENT_SUM = re.compile(r"\b(?:total|including|plus)\b", re.I)


def _percent_asks(text: str) -> str:
    """"15% of 80" asks for the part, "80 is 15% of what?" for the whole, "80 with 15% off" for what is left,
    "my total on a $64 bill with an 18% tip" for the sum."""
    if _PERCENT_WHOLE.search(text):
        return "whole"
    if _PERCENT_OFF.search(text):
        return "rest"
    return "sum" if _PERCENT_SUM.search(text) else "part"


_GENERIC_WHEN = frozenset("""should can could may must need needs supposed allowed safe ok okay recommended usually
typically normally generally most start starts begin begins""".split())  # "When do babies usually start walking?"
_PAST = frozenset("did was were had".split())


def _stage_asked(raw: list[str]) -> str | None:
    """A "when" asked of what should, can or may be done is asked in an age as well: "When should babies
    start solid food?" = "At what age should babies start solids?". Not in the past, where a date and an
    age are two answers ("When did Mozart die?" ≠ "How old was Mozart when he died?")."""
    if any(raw[i:i + 2] in (["how", "old"], ["what", "age"], ["which", "age"]) for i in range(len(raw) - 1)):
        return "age"
    if "when" in raw and _GENERIC_WHEN & set(raw) and not _PAST & set(raw):
        return "when"
    return None


# a yes/no question followed by the amount it leads to: "… expire, and after how long?"
_AMOUNT_FOLLOW_UP = re.compile(r"[?,;]\s*(?:and\s+)?(?:if\s+so,?\s+)?(?:after\s+|for\s+)?"
                               r"how\s+(?:many|much|long|often)\b[^?,;]*\??\s*$", re.I)


_OUR_SIDE = frozenset("we us our ours ourselves".split())
_THEIR_SIDE = frozenset("they them their theirs themselves".split())


def _sides(raw: list[str]) -> tuple[str, ...]:
    """The turns between the asker's side and another's, as named ("We're signing an NDA. We'll share our
    data with them" → we, they; "… They'll share their data with us" → we, they, we); () when the text
    names only one side."""
    order: list[str] = []
    for w in raw:
        side = "we" if w in _OUR_SIDE else "they" if w in _THEIR_SIDE else None
        if side and order[-1:] != [side]:
            order.append(side)
    return tuple(order) if len(set(order)) == 2 else ()


# a possessor before what it owns: "my", "our", "your", … or a noun with 's ("my neighbor's house"); not the
# contractions that end in 's ("it's", "what's", "there's")
_POSSESSOR = re.compile(r"\b(my|our|your|his|her|their|(?!(?:it|that|what|there|here|who|where|how|he|she|let|"
                        r"when|why|which|one|everyone|someone|nobody|everything|something|nothing)['’])"
                        r"[a-z]+['’]s|[a-z]+s['’])\s+(?=([a-z]+))", re.I)  # (what is owned may own the next word)
_FIRST_PERSON = frozenset(("my", "our"))
_POSSESSIVE_PRONOUNS = frozenset("my our your his her their".split())


def _owners(text: str) -> frozenset[tuple[str, str]]:
    """Who owns what, as written: "my tree falls on my neighbor's house" → (tree, me), (neighbor, me), (house,
    neighbor). The asker and the asker's side are one owner ("my" = "our")."""
    if "'" not in text and "’" not in text and not _POSSESSIVE_PRONOUNS & set(text.lower().split()):
        return frozenset()
    pairs = set()
    for m in _POSSESSOR.finditer(text):
        owner = m.group(1).lower()
        owner = "me" if owner in _FIRST_PERSON else owner if owner in ("your", "his", "her", "their") \
            else canonical(re.sub(r"[\'’]s?$", "", owner))
        pairs.add((canonical(m.group(2).lower()), owner))
    return frozenset(pairs)


_CLAUSE_ENDS = frozenset("but and or if when because while so".split())


def _negated_words(at: list[int], canon: list[str], content: set[str]) -> frozenset[str]:
    """The content words in the three after each negation, within its clause."""
    words = set()
    for i in at:
        for c in canon[i + 1:i + 4]:
            if c in _CLAUSE_ENDS:
                break
            if c in content:
                words.add(c)
    return frozenset(words)


_KEEP = frozenset("keep keeps keeping kept".split())
_STOP = canonical("stop")


def _preventing(tokens: list[str]) -> frozenset[int]:
    """Where "keep" says stop: "keep my baby's ears from hurting" = "stop my baby's ears from hurting", "keep water
    from going up my nose" (not "keep it from the sun")."""
    found = set()
    for i, tok in enumerate(tokens):
        if tok in _KEEP:
            rest = tokens[i + 2:i + 7]  # an object of one to four words, then "from" and a verb in -ing
            at = next((j for j, t in enumerate(rest) if t == "from"), None)
            if at is not None and at + 1 < len(rest) and len(rest[at + 1]) > 4 and rest[at + 1].endswith("ing"):
                found.add(i)
    return frozenset(found)


_HOW_LONG = re.compile(r"\bhow\s+long\b", re.I)
# nouns in -ing that "keep" may take as its object ("keep bedding dry")
_ING_NOUNS = frozenset("""thing things something anything nothing everything morning evening ceiling building
clothing bedding wedding painting ring string king spring swing wing sibling siblings pudding icing stuffing dressing
seasoning lighting heating plumbing wiring housing parking earnings savings belongings ending""".split())


def _going_on(tokens: list[str], text: str) -> frozenset[int]:
    """Where "keep" says a thing goes on: "a toilet that keeps running" runs, "Why does my baby keep crying?" asks
    why it cries (not "keep bedding dry", "keep it running", nor how long it goes on: "How long can a cheetah keep
    running?")."""
    if _HOW_LONG.search(text):
        return frozenset()
    return frozenset(i for i, tok in enumerate(tokens[:-1]) if tok in _KEEP and len(tokens[i + 1]) > 4
                     and tokens[i + 1].endswith("ing") and tokens[i + 1] not in _ING_NOUNS)


def _asking_intent(text: str) -> str | None:
    """The intent of the sentence that asks, after full sentences of context (not after a colon or a dash,
    where the question leans on what came before: "Cleaning a cast iron skillet - what's the right method?")."""
    sentences, asking = asking_sentence(text, full_stops_only=True)
    return intent_of(tokenize(sentences[asking]), sentences[asking]) if asking > 0 else None


@lru_cache(maxsize=65536)
def analyse(text: str) -> Facts:
    raw_tuple, phrased = phrased_tokens(text)
    raw = list(raw_tuple)
    language = language_of(raw, text)
    foreign = lx.LANGUAGE_STOPWORDS.get(language, frozenset()) if language not in (None, "en") else frozenset()
    tokens = list(phrased)
    values, ordinals, used, number_ends, divisions = read_numbers(tokens)
    clocks = []
    for i, tok in enumerate(tokens):
        if CLOCK_TOKEN.match(tok):  # a time of day: compared as one number, never as a term
            clocks.append(tok)
            used[i] = True
    # what each percent sign belongs to ("15% of 80" ≠ "what percent of 80 is 15"); "as a percentage" alone, none
    percents = tuple(sorted(number_ends[i - 1] for i, tok in enumerate(tokens)
                            if tok == "percent" and i - 1 in number_ends))
    if values and any(t in ("c", "f") for t in tokens):  # "100 f to c", not "C-14"
        tokens = [{"c": "celsius", "f": "fahrenheit"}.get(t, t)
                  if i == 0 or used[i - 1] or tokens[i - 1] in ("degrees", "degree", "to", "in", "into") else t
                  for i, t in enumerate(tokens)]
    canon = [canonical(t) for t in tokens]
    quoted = quoted_words(text)
    terms: set[str] = set()
    light: set[str] = set()
    light_seen: list[str] = []
    named = named_words(text)
    negations = 0
    negated_at: list[int] = []
    # "the largest desert" is "the largest desert in the world": a superlative's default scope is the
    # world, one light word however it is named ("on Earth", "on the planet", "globally").
    superlative = any(t in lx.SUPERLATIVES for t in tokens)
    if superlative:
        canon = ["world" if t in lx.WORLD_SCOPE else c for t, c in zip(tokens, canon)]
    said = said_words(tokens)
    for i in _preventing(tokens):
        canon[i] = _STOP
    going_on = _going_on(tokens, text)
    for i in going_on:
        canon[i] = "keep_on"  # an aspect, no term (and not "store", as "keep" alone reads)
    for i, (tok, c, was_number) in enumerate(zip(tokens, canon, used)):
        if was_number or i in going_on:
            continue
        if tok in lx.NEGATORS or c in lx.NEGATORS:
            # "97 prime or not?", "and if not, how do they differ?", "not the same as": no claim negated
            if not (tok == "not" and (tokens[i - 1:i] in (["or"], ["if"]) or tokens[i + 1:i + 3] == ["the", "same"])):
                negations += 1
                negated_at.append(i)
            continue
        if c in quoted or tok in named or (tok in said and tok in lx.COURTESY) or _data_noun(tokens, i):
            terms.add(c)
        elif tok in lx.FUNCTION or c in lx.FUNCTION or c in QUESTION_TYPES or c == "how" or tok in foreign:
            continue
        elif tok in lx.SCAFFOLD or c in lx.SCAFFOLD:
            continue
        elif (tok in lx.LIGHT or c in lx.LIGHT or (light_stem(tok) in lx.LIGHT and tok not in lx.CANONICAL)
              or (superlative and c == "world")):  # (a word given its own canonical form is not a light one's)
            light.add(c)
            light_seen.append(c)
        elif c in POLE_OF:
            terms.add(c)
        elif len(c) > 1 or c.isdigit() or (c.isalpha() and c not in _CLITICS):  # vitamin K ≠ vitamin C
            terms.add(c)
    question = frozenset(QUESTION_TYPES[c] for c in canon if c in QUESTION_TYPES)
    intent = intent_of(raw, text)
    if intent is None:  # context first: "Settling a bet. How tall is the tallest mountain?" asks in its second
        intent = _asking_intent(text)
    if intent == "yesno" and _AMOUNT_FOLLOW_UP.search(text):
        intent = "quantity"  # "does mars have any moons? how many" asks the number, which answers both
    amount = _amount(raw)
    # Words that narrow the question although the terms check would let one side add them
    extra_words: set[str] = set()
    if _named_city(tokens, terms):
        terms.add(_CITY)  # "mexico city population" ≠ "mexico population"
    terms |= _named_class(text)  # "the capital of the country Georgia" ≠ "the capital of Georgia"
    rates = _rates(raw)
    if rates:
        extra_words |= rates
        if intent == "yesno" or amount == "cost" or any(t in _MONEY_WORDS for t in raw):
            terms |= rates  # "ibuprofen every day" ≠ "ibuprofen", "cost per year" ≠ "cost"
    if any(t in _KIND_WORDS for t in raw):
        extra_words.add("n_kinds")
        if any(raw[i:i + 2] == ["how", "many"] and raw[i + 2] in _KIND_WORDS for i in range(len(raw) - 2)):
            terms.add("n_kinds")  # "how many species of penguins" ≠ "how many penguins"
    if any(c in QUANTITY_NOUNS for c in canon):
        question |= {"quantity"}
    agent_noun = any(t in lx.AGENT_NOUNS for t in tokens)
    if agent_noun or _ends_by_whom(raw):
        question |= {"person"}  # "saxophone inventor", "penicillin discovered by" ask who, not when
    if any(t in ("date", "dates", "year") for t in tokens):
        question |= {"time"}  # "titanic sinking date" asks when, not why or where
    if any(p == "since" and t in ("which", "what", "when") for p, t in zip(raw, raw[1:])):
        question |= {"time"}  # "Since which pip version does …?" asks from when, not why
    if any(p in ("in", "at", "from") and t in ("what", "which") and n in _PLACE_NOUNS
           for p, t, n in zip(raw, raw[1:], raw[2:])):
        # "In what city did they sign it?" asks where, not "On what date …?" ("Which country won?" asks who)
        question |= {"place"}
    sources, targets = _directions(canon)
    content = terms | light
    forms, mentioned_forms = forms_of(raw)
    subject_of, object_of = roles_of(raw, canon)
    math = year_spans_read(powers_in_symbols(text))  # "2024/25" is a tax year, not a division; "x squared" is x^2
    return Facts(
        words=frozenset(canon) | frozenset(tokens) | extra_words,
        agent_asked=agent_noun and not ({"who", "whom", "whose"} & set(tokens)),
        terms=frozenset(terms),
        light=frozenset(light),
        light_counts=tuple(sorted(Counter(light_seen).items())),
        term_counts=tuple(sorted(Counter(c for t, c in zip(tokens, canon)
                                         if c in terms and t not in lx.FUNCTION and c not in lx.FUNCTION).items())),
        every=_every(tokens, canon, terms),
        manner=_manner(tokens),
        singular=_singular(tokens, canon, terms),
        numbers=tuple(sorted(values)),
        percents=percents,
        percent_asks=_percent_asks(text) if percents else None,
        ordinals=tuple(sorted(ordinals)),
        clocks=tuple(sorted(clocks)),
        counted=frozenset((canon[i + 1], value) for i, value in number_ends.items()  # not a fraction's parts
                          if i + 1 < len(canon) and (canon[i + 1] in terms or canon[i + 1] in light)
                          and value.is_integer() and not (i > 0 and used[i - 1])),
        negated=negations % 2 == 1,
        negated_words=_negated_words(negated_at, canon, terms | light),
        poles=frozenset(c for i, c in enumerate(canon)
                        if c in POLE_OF and not (c == "all" and canon[i - 1:i] == ["at"])),  # "at all" is no "all"
        question=question,
        stage_asked=_stage_asked(raw),
        sources=frozenset(sources),
        targets=frozenset(targets),
        ordered=frozenset(_ordered_pairs(canon, content | _named_scaffold(tokens, canon))
                          | _substitutions(tokens, canon, content)),
        ends=_ends(canon, content),
        clock_places=_clock_places(tokens, canon, content, text),
        places_in=_places_in(tokens, canon, content),
        eating=_eating(canon, terms),
        language=language,
        intent=intent,
        acts=acts_of(raw),
        amount=amount,
        subject_of=subject_of,
        object_of=object_of,
        self_role=self_role(raw),
        # what a quoted word means survives its inflection ("jump the shark" = "jumped the shark"); its
        # spelling, rhymes, syllables and translation do not ("necessarily" ≠ "necessary", "lit" ≠ "light")
        quoted=() if intent in ("definition", "overview") or _MEANING_WORDS & set(raw) else quoted_spans(text),
        operations=frozenset((OPERATOR[m.group(2).strip().lower()], m.group(1).lower(), m.group(3).lower())
                             for pattern in (OPERATION, VARIABLE_OPERATION) for m in pattern.finditer(math))
        | frozenset(("range", m.group(1), m.group(2)) for m in RANGE.finditer(math)) | divisions,
        operators=expression_operators(math),
        points=coordinate_points(text),
        sides=_sides(raw),
        owners=_owners(text),
        calls=function_calls(text),
        code=code_spans(text),
        decimals=trailing_zero_decimals(text),
        forms=forms,
        mentioned_forms=mentioned_forms,
    )
