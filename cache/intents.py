"""What kind of answer a question's wording asks for (`intent_of`: a definition, a how-to, an amount,
who/when/where/why…), which kinds contradict each other (`INTENT_CONFLICTS`), the forms of answer a
request asks for (`forms_of`: a poem, a summary, a table…) and the role the question word plays
(`roles_of`: "What eats koalas?" vs "What do koalas eat?"). Used by `cache.facts`."""

from __future__ import annotations

import re

from cache import lexicon as lx
from cache import synonyms
from cache.wording import QUANTITY_NOUNS, canonical, parse_number

_AUX = frozenset("do does can could should would will to i you we one".split())
_BE = frozenset("is are was were".split())
_YES_NO_LEADS = frozenset("is are was were am can could do does did should will would has have had may must".split())
_WH = lx.QUESTION_WORDS
_WH_INTENT = {"who": "person", "whom": "person", "whose": "person", "when": "time", "where": "place",
              "why": "reason", "whether": "yesno"}
# what a keyword query asks when it ends with it
_KEYWORD_ASKS = {"reason": "reason", "reasons": "reason", "cause": "reason", "causes": "reason", "why": "reason",
                 "count": "quantity", "required": "yesno", "allowed": "yesno", "legal": "yesno", "tips": "howto",
                 "advice": "howto"}
_DESCRIBE = frozenset("describe explain define walk talk".split())  # "walk me through …" asks for an account
_TELL = _DESCRIBE | {"tell"}
_SIGNIFY = frozenset("indicate indicates signify signifies".split())
_JUDGED = frozenset("considered deemed regarded".split())
# what a work says: "What is the main idea of Walden?" asks its topic, as "What is Walden about?" does ("idea"
# and "point" only after "main" or "central": "the point of a VPN" is its use)
_TOPIC_NOUNS = frozenset("theme themes message moral plot summary gist premise thesis storyline synopsis".split())
_TOPIC_AFTER_MAIN = frozenset("idea ideas point points argument".split())
_LEVELS = frozenset("low high normal dangerous safe fast slow".split())
# "Australia's capital" (an attribute of something, not a definition); not "what's", "it's", "there's"
_POSSESSIVE = re.compile(r"\b(?!(?:what|that|it|there|here|who|where|how|let|he|she)['’]s\b)\w+['’]s\b", re.I)
# a name that holds a possessive is still a name: "What is Parkinson's Law?", "What is Hodgkin's lymphoma?"
_NAMED_POSSESSIVE = re.compile(r"^\W*[Ww]hat\s+(?:is|are|was)\s+(?:an?\s+|the\s+)?[A-Z][\w-]*['’]s\s+"
                               r"(?:[A-Z][\w-]*|law|principle|theorem|syndrome|disease|paradox|rule|razor|constant|"
                               r"equation|lemma|hypothesis|conjecture|lymphoma)\s*\??\s*$")
_PARTICIPLE = re.compile(r"^(?:\w+ed|" + "|".join(sorted(lx.IRREGULAR_PARTICIPLES)) + ")$")


# Intents that ask for different answers. Pairs not listed may share an answer ("How do earthquakes
# happen?" / "Why do earthquakes happen?"); "comparison" conflicts only with a count (the compared terms
# are the terms check's business).
_CONFLICTS = {
    "definition": {"manner", "quantity", "yesno", "reason", "norm", "person", "time", "place", "composition"},
    "composition": {"manner", "quantity", "yesno", "person", "time", "place", "what-is"},
    "what-is": {"person"},
    "manner": {"quantity", "norm", "yesno", "person", "time"},
    "quantity": {"yesno", "person", "place", "reason"},
    "yesno": {"person", "time", "place", "reason", "norm"},
    "reason": {"person", "time", "place"},
    "which": {"quantity", "time"},
    "topic": {"person", "time", "place", "quantity", "yesno"},
    "appearance": {"person", "time", "place", "quantity", "definition"},
    "event": {"person", "place", "quantity", "definition"},
    "function": {"person", "time", "place", "quantity", "composition"},
    "how-did": {"person", "time", "place", "quantity", "definition", "yesno"},
    "overview": {"person", "time", "place", "reason", "quantity"},
    "use": {"howto", "manner", "person", "time", "place", "quantity", "composition"},
    "consequence": {"definition", "what-is", "which", "quantity", "person", "time", "place", "yesno", "norm",
                    "manner", "reason"},
}
_REMEDY_OPENINGS = frozenset({("to", "do"), ("should", "i", "do"), ("can", "i", "do"), ("do", "i", "do"),
                              ("should", "you", "do"), ("do", "you", "do"), ("can", "you", "do"),
                              ("helps", "with"), ("helps",), ("cures",)})
# "howto" is a manner ("How do I calculate EBITDA?") that also differs from a reason: "How do I treat a
# migraine?" is not "What causes migraines?" (as "How do earthquakes happen?" is "Why do they happen?")
for _others in _CONFLICTS.values():
    if "manner" in _others:
        _others.add("howto")
_CONFLICTS["howto"] = _CONFLICTS["manner"] | {"reason"}
# how a thing happens is not where ("How do penguins sleep?" / "Where do penguins sleep?"); what to do may
# be where to go ("How do I buy a train ticket?" / "Where can I buy …?")
_CONFLICTS["manner"].add("place")
# a comparison is not a count of one of the compared: "kafka topic vs partition" ≠ "How many partitions should a
# Kafka topic have?" (probe W's one wrong pair, rotated)
_CONFLICTS["comparison"] = {"quantity"}
# "Who was Napoleon?" asks who in general, as "Tell me about Napoleon" does; "Who wrote X?" asks for one
# person, which an overview of X does not give. Otherwise the two conflict with the same intents.
for _others in _CONFLICTS.values():
    if "person" in _others and _others is not _CONFLICTS["overview"]:
        _others.add("who-is")
INTENT_CONFLICTS = frozenset(frozenset((a, b)) for a, others in _CONFLICTS.items() for b in others)


# "What date / season / century …?" asks when, not which thing
_WHEN_NOUNS = frozenset("date dates season seasons century decade hour week weekday era".split())


# "What boiling time …", "What daily calorie count …", "What daily dose …" ask an amount, not which thing
_AMOUNT_HEADS = frozenset("time count intake dose dosage amount temperature ratio".split())


def _amount_noun_phrase(words: list[str]) -> bool:
    return any(w in _AMOUNT_HEADS for w in words[2:4] if w not in lx.FUNCTION)


def _measures(word: str) -> bool:
    """A word naming an amount or a date: "population", "percentage", "year" ("What year …" asks when)."""
    return canonical(word) in QUANTITY_NOUNS or word in lx.MEASURE_WORDS


# What a how-to asks to do to a thing: "How do I list S3 buckets?" is not "How do I create an S3 bucket?".
# Only unambiguous verbs: "make", "get", "check out", "print" say too little or too much.
_ACTS = {word: act for act, words in (
    ("create", "create creating add adding generate generating initialize init declare declaring define defining new"),
    ("read", "list listing show showing see view viewing display displaying find finding look"),
    ("count", "count counting"),
    ("delete", "delete deleting remove removing erase uninstall drop"),
    ("change", "change changing edit editing update updating modify modifying rename renaming"),
) for word in words.split()}


def acts_of(raw: list[str]) -> frozenset[str]:
    """The operations a request's verbs name ("create", "read", "count", "delete", "change"). Not a word
    before "out" or "of" ("find out", "a list of"), the last word, or "define" opening a definition."""
    acts = set()
    for i, word in enumerate(raw[:-1]):  # a last word is a noun or has no object: "noble gases list", "… show?"
        act = _ACTS.get(word)
        if act and raw[i + 1] not in ("out", "of") and not (i == 0 and word == "define") \
                and raw[i + 1:i + 3] not in (["me", "how"], ["us", "how"]) and raw[i + 1] != "how":
            acts.add(act)  # ("define X" is a definition; "show me how to X" asks X)
    return frozenset(acts)


def _asks_what_a_work_says(words: list[str]) -> bool:
    """"What is the (main) theme / the main idea / the moral of X?": the topic of a work."""
    if words[1:3] not in (["is", "the"], ["was", "the"], ["are", "the"], ["were", "the"]):
        return False
    rest = words[3:]
    if rest[:1] in (["main"], ["central"], ["key"], ["overall"]):
        noun = rest[1:2]
        return bool(noun) and (noun[0] in _TOPIC_NOUNS or noun[0] in _TOPIC_AFTER_MAIN) and rest[2:3] == ["of"]
    return bool(rest) and rest[0] in _TOPIC_NOUNS and rest[1:2] == ["of"]


def _asks_who_someone_is(words: list[str]) -> bool:
    """"Who was Napoleon?" or, embedded, "… who Napoleon was": who the person is in general. Not "Who is
    the author of …?", "Who was the first …?": one person picked out by a role or a rank."""
    if words[-1] in _BE and len(words) > 2:
        return True
    if words[-1] in ("to", "with", "by", "for", "from", "of", "about", "after"):
        return False  # "Who is Shakira married to?"
    rest = [w for w in words[2:4] if w not in ("the", "a", "an")] if len(words) > 2 and words[1] in _BE else []
    return bool(rest) and not (rest[0] in lx.AGENT_NOUNS or rest[0] in lx.PERSON_LIGHT or rest[0] in lx.ORDINALS
                               or rest[0] in lx.SUPERLATIVES or rest[0] in ("ceo", "head"))


def _at_the_same_time(words: list[str], i: int) -> bool:
    """Is words[i] the "same" of "at the same time" (together, which compares nothing: "Can I have both an FSA
    and an HSA at the same time?")?"""
    return words[i] == "same" and words[i - 2:i] == ["at", "the"] and words[i + 1:i + 2] == ["time"]


def intent_of(raw: list[str], text: str) -> str | None:
    """The kind of answer the question's own wording asks for, read from how it starts: "howto" (what
    to do: "How do I calculate EBITDA?", "What should I do if …?"), "manner" (how it is done: "How is mead
    made?"), "definition" ("What is EBITDA?", "What does X mean?", "define X", "X meaning"), "composition"
    ("What is mead made of?"), "norm" ("What is a good cap rate?"), "yesno" ("Do I need gap insurance?"),
    "comparison", "quantity", who/when/where/why ("What causes X?" is a reason), "how-did" ("How did
    Napoleon die?": what happened), "which" ("Which islands make up Japan?", "What is the tallest
    building?": names, not a count), "function" ("What does the liver do?"), "topic" ("What is X
    about?"), "appearance" ("What did X look like?"), "event" ("What happened to X?"), or "what-is" (any
    other "What is …?": "What is the capital of Australia?", which only a composition question
    contradicts), "overview" ("Explain X", "Tell me about X", "X explained"), "who-is" ("Who was
    Napoleon?": who someone is in general, not one person picked out). None when the wording does not
    say: most keyword queries. An embedded question with "is" reads as the direct one ("Explain what mead
    is" as "What is mead?").
    Intents that `_CONFLICTS` lists want different answers ("How do I calculate EBITDA?" is not "What
    is EBITDA?")."""
    words = list(raw)
    for i, w in enumerate(words[:-1]):  # the tokenizer drops "'s": "What's EBITDA?" → what is EBITDA
        if w in ("what", "that") and words[i + 1] not in _BE and re.search(rf"\b{w}['’]s\b", text, re.I):
            words.insert(i + 1, "is")
            break
    if any(w in lx.COMPARISON_WORDS and words[i - 1:i] != ["many"] and not _at_the_same_time(words, i)
           for i, w in enumerate(words)) or (
            "or" in words and any(w in lx.CHOICE_VERBS for w in words)):  # (not "how many different kinds")
        return "comparison"  # "X vs Y", "Is X the same as Y?", "Should I use who or whom?"
    if set(zip(words, words[1:])) & lx.COMPOSITION_PAIRS:
        return "composition"  # "What is kombucha made of?" is not "What is kombucha?"
    stripped = True
    explained = False
    while stripped and words:  # polite and request prefixes: "Can you tell me …", "Explain …"
        stripped = False
        if _asks_ability(words):
            return "yesno"  # "Can you freeze milk?" asks whether one can, not for a how-long or a how-to
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
    be = next((i for i, w in enumerate(words[2:], 2) if w in _BE), None)
    if prefixed and first in _WH and be is not None:  # "Explain what mead is" reads as "What is mead?"
        words = [first, words[be], *words[1:be], *words[be + 1:]]
    filed = len(words) > 2 and first not in _WH and words[-1] in lx.FIELDS  # "inflation meaning economics"
    if filed:
        words = words[:-1]
    if first == "define" or words[-1] in ("meaning", "definition") or first in ("meaning", "definition"):
        return "definition"  # "define inflation", "ebitda meaning", "definition of a sonnet"
    if first not in _WH and len(words) > 3 and words[-3:] == ["yes", "or", "no"]:
        return "yesno"  # "tipping wedding vendors yes or no" asks whether, not how much
    if first not in _WH and len(words) > 3 and words[-3:] == ["what", "to", "do"]:
        return "howto"  # "nose bleeding what to do" asks what to do, not "Why does my nose keep bleeding?"
    if first not in _WH and len(words) > 1 and words[-1] == "explained":
        return "overview"  # "inflation explained" is "Explain inflation"
    if first not in _WH and len(words) > 2 and words[-1] in _KEYWORD_ASKS:
        return _KEYWORD_ASKS[words[-1]]  # "dog eating grass reason" asks why, "guitar string count" how many
    if len(words) > 2 and first in ("tips", "advice"):
        return "howto"  # "tips raise request" asks how (not how much, nor when)
    # "List the months that have 31 days", "fat soluble vitamins list" name them; "How many …" counts them
    # ("python reverse list" is a list to reverse)
    listed = first in ("list", "name") or words[-1] == "list" and words[-2].endswith("s")
    if len(words) > 1 and not prefixed and listed:
        return "which"
    if filed and not prefixed and words[-1] not in lx.FIELDS and not any(
            w in lx.ASKING_VERBS or w in lx.SUPERLATIVES for w in words):
        return "definition"  # a keyword filed under a field asks what it is there: "comparative advantage economics"
    if explained and first not in _WH or prefixed and first == "about":  # "Tell me about Julius Caesar."
        # "Explain exception handling" asks for a definition and a how-to alike: an overview, which is not
        # who made it, when, where, why or how many ("Explain the Bayeux Tapestry." ≠ "Who made …?")
        return "overview"
    # (a possessive picks one person out: "Who is Shakira's husband?")
    if first in ("who", "whom") and _asks_who_someone_is(words) and not _POSSESSIVE.search(text):
        return "who-is"  # "Who was Napoleon?", "Can you explain who the Beatles were?"
    if first in _WH_INTENT:
        return _WH_INTENT[first]
    if first == "how":
        nxt = words[1] if len(words) > 1 else None
        if nxt in lx.HOW_ADJECTIVES:
            return "quantity"
        if len(words) > 3 and nxt not in _AUX and nxt not in _BE and words[2] in _BE and words[3] != "it":
            return "quantity"  # "How salty is the sea?" asks a degree, not "Why is the sea salty?"
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
        if prefixed and words[-1] in ("work", "works"):
            return "manner"  # "Explain how credit scores work" is "How do credit scores work?"
        return None
    if any(w in lx.MANNER_NOUNS and i + 1 < len(words) and words[i + 1] in ("to", "for", "of")
           for i, w in enumerate(words)):
        return "manner"
    if first in ("what", "which"):
        if "mean" in words or "means" in words or "meaning" in words:
            return "definition"
        if words[1:2] in (["do"], ["does"]) and (words[-2:-1] == ["tell"] or words[-1] in _SIGNIFY):
            return "definition"  # "What does standard deviation tell you?" asks what it means, not how to compute it
        if "used" in words[2:-1] and words[words.index("used", 2) + 1] == "for":
            return "use"  # "What is standard deviation used for?" is not "How do you calculate it?"
        if words[-1] == "about" and len(words) > 3:
            return "topic"  # "What is One Hundred Years of Solitude about?" is not "Who wrote it?"
        if _asks_what_a_work_says(words):
            return "topic"
        if words[-2:] == ["look", "like"]:
            return "appearance"  # "What did Cleopatra look like?" is not "Who was Cleopatra?"
        if len(words) > 2 and words[1] == "happened":
            return "event"  # "What happened to the last tsar?" is not "Who was the last tsar?"
        if (words[1:2] == ["happens"] and words[2:3] in (["if"], ["when"])) or (
                words[1:2] in (["will"], ["would"], ["could"], ["might"]) and words[2:3] == ["happen"]
                and words[3:4] in (["if"], ["when"])):
            return "consequence"  # "What happens if my bag is over the limit?" is not "What is the limit?"
        if tuple(words[1:4]) in _REMEDY_OPENINGS or tuple(words[1:3]) in _REMEDY_OPENINGS:
            return "howto"  # "What should I do if someone faints?" asks what to do, not why people faint
        if len(words) > 3 and words[1] in ("should", "do", "can") and words[-1] == "with":
            return "which"  # "What should I lube my chain with?" names a thing, not when to do it
        if words[1:2] in (["cause"], ["causes"], ["caused"]):
            return "reason"  # "What causes inflation?" is "Why does inflation happen?", not "What is inflation?"
        if len(words) > 3 and words[1] in ("do", "does") and words[-1] == "do":
            return "function"  # "What does the liver do?" is not "Where is the liver?"
        judged = next((i for i, w in enumerate(words) if w in _JUDGED), None)
        verdict = [w for w in words[judged + 1:judged + 5] if w not in ("a", "an", "to", "be")][:1] if judged else []
        if verdict and (verdict[0] in lx.NORM_WORDS or verdict[0] in _LEVELS):
            return "norm"  # "What is considered a good credit score?", "What blood sugar is considered low?"
        if (not prefixed and len(words) > 2 and words[1] not in _BE and words[1] not in lx.FUNCTION
                and not _measures(words[1]) and words[1] not in _WHEN_NOUNS and not _amount_noun_phrase(words)):
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
                    and not any(_measures(w) for w in rest if w not in lx.SUPERLATIVES)):
                return "which"  # "What is the tallest building?" names it; "How tall is the tallest…?" measures
                # ("minimum", "maximum" usually name an amount: "What is the minimum wage?")
            # "What is (the) X?" with nothing after X: a definition; "What is the X of Y", "… in 2020",
            # "What is the largest X", "What is Australia's capital" ask for something else
            bare = not any(w in lx.FUNCTION or w in lx.SUPERLATIVES or w in lx.QUANTITY_NOUNS
                           or parse_number(w) is not None for w in rest)
            if rest and bare and (not _POSSESSIVE.search(text) or _NAMED_POSSESSIVE.search(text)):
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


def _asks_ability(words: list[str]) -> bool:
    """"Can you freeze milk?", "Could you see the Northern Lights from Scotland?": the generic "you" asks
    whether something can be done, a yes/no question. Not a request to the assistant: "Can you tell me /
    explain / write / walk me through …" (`lexicon.ASKING_VERBS`, or "me" right after the verb)."""
    if len(words) < 3 or words[0] not in ("can", "could") or words[1] != "you":
        return False
    verb = words[2]
    return verb.isalpha() and verb not in lx.ASKING_VERBS and "me" not in words[3:5]


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


# what lays an answer out "in a table" (not "count the rows in a table")
_TABLE_VERBS = lx.CREATE_VERBS | frozenset("compare show put present list summarize summarise organize organise format "
                                          "display lay".split())


def forms_of(raw: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(forms the request asks its answer to take, forms it mentions at all), from `lexicon.OUTPUT_FORMS`
    and `CREATED_FORMS`: "Write a haiku about …" requests a haiku, "autumn leaves haiku" mentions one. A
    work to create is requested only within four words after a verb that asks for it."""
    requested, mentioned = set(), set()
    for i, token in enumerate(raw):
        for form, pattern, created in _FORM_INDEX.get(token, ()):
            if tuple(raw[i:i + len(pattern)]) != pattern:
                continue
            mentioned.add(form)
            asking = _TABLE_VERBS if form == "table" else lx.CREATE_VERBS
            if created is False or (created and any(w in asking for w in raw[max(0, i - 4):i])):
                requested.add(form)
    return frozenset(requested), frozenset(mentioned)


# Before "me", words that make it no one's object in the question's own act: a request ("tell me", "show
# me"), a preposition ("for me", "to me"): "Is it possible for me to donate blood?" = "Can I donate blood?"
_NOT_ACTED_ON = lx.ASKING_VERBS | frozenset("for to with about from like than let help give gave told showed".split())
_PASSIVE_AFTER_I = frozenset("be been being am was".split())
# "How do I know / tell / find out if …": the asker asking, not a participant in what is asked about
_FINDING_OUT = frozenset("""know tell check see find figure learn determine verify confirm notice recognize
recognise understand spot detect identify""".split())


def self_role(raw: list[str]) -> str | None:
    """The asker's place in the question: "subject" ("What should I get my wife?", "Can I refuse to see my
    doctor?"), "object" ("What should my wife get me?", "Can my doctor refuse to see me?"), None for
    both, neither, or a passive ("Can I be evicted …" asks what "… evict me" does)."""
    def passive(after: list[str]) -> bool:  # "I am/was …", "I (can) be fired", "I get/got fired"
        return bool(after) and (after[0] in _PASSIVE_AFTER_I or after[1:2] in (["be"], ["been"])
                                or after[0] in ("get", "got") and bool(_PARTICIPLE.match(after[1] if len(after) > 1 else "")))

    subject = any(w == "i" and not passive(raw[k + 1:k + 3]) and (raw[k + 1:k + 2] or [""])[0] not in _FINDING_OUT
                  for k, w in enumerate(raw))
    acted_on = any(w == "me" and k > 0 and canonical(raw[k - 1]) not in _NOT_ACTED_ON and raw[k - 1] not in _NOT_ACTED_ON
                   for k, w in enumerate(raw))
    if "by" in raw or subject == acted_on:
        return None
    return "subject" if subject else "object"


def roles_of(raw: list[str], canon: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(verbs whose subject "what"/"who" is, verbs whose object it is): "What eats koalas?" → ({eat}, {}),
    "What do koalas eat?" → ({}, {eat}) — there every content word after the subject is a candidate verb.
    Verbs are kept in every form they may be ("fought": fought, fight). The same words with the roles
    swapped ask the opposite question, which the terms check cannot see."""
    if len(raw) < 3 or raw[0] not in ("what", "who", "whom") or len(canon) != len(raw):
        return frozenset(), frozenset()
    return _roles(raw, canon, 1)


def which_roles_of(raw: list[str], canon: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """`roles_of` for "which/what NOUN …": "Which team did Germany beat?" asks for beat's object, "Which
    team beat Germany?" for its subject."""
    if len(raw) < 4 or raw[0] not in ("which", "what", "whose") or raw[1] in lx.FUNCTION or len(canon) != len(raw):
        return frozenset(), frozenset()
    return _roles(raw, canon, 2)


_PASSIVE_BE = frozenset("is are was were been being be get gets got".split())


def _roles(raw: list[str], canon: list[str], after: int) -> tuple[frozenset[str], frozenset[str]]:
    """(subject-of verbs, object-of verbs) of the asked thing, whose wording ends before `after`."""
    none: frozenset[str] = frozenset()
    if raw[after] in _PASSIVE_BE and after + 1 < len(raw):
        if _PARTICIPLE.match(raw[after + 1]):  # "Which company was acquired by GitHub?": acquire's object
            is_object, verbs = True, [(raw[after + 1], canon[after + 1])]
        elif raw[-1] == "by":  # "Who was Beethoven taught by?": teach's subject, the agent
            part = next((j for j in range(after + 2, len(raw) - 1) if _PARTICIPLE.match(raw[j])), None)
            if part is None:
                return none, none
            is_object, verbs = False, [(raw[part], canon[part])]
        else:
            return none, none
    elif raw[after] in ("do", "does", "did"):  # "… did Germany beat": the verbs after the subject
        is_object = True
        verbs = [(w, c) for w, c in zip(raw[after + 2:], canon[after + 2:]) if w not in lx.FUNCTION]
    elif raw[after].isalpha() and raw[after] not in _YES_NO_LEADS and raw[after] not in lx.FUNCTION:
        is_object, verbs = False, [(raw[after], canon[after])]
    else:
        return none, none
    table = synonyms.table()
    forms = frozenset(f for w, c in verbs for f in (c, *(table.lemmas(w) if table else ())))
    return (none, forms) if is_object else (forms, none)
