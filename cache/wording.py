"""How the near-miss guard reads a text's words (`cache.guard`): tokens with the spellings that name
something kept apart ("the US", "in May", "a will", "IT"), multi-word phrases (`lexicon.PHRASES`),
canonical forms (spelling variants, abbreviations, accents folded, Snowball stems), the language, and the
words a text writes as names, quotes or asks to say. Word lists live in `cache.lexicon`."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

from cache import lexicon as lx

WORD = re.compile(r"[^\W_]+", re.UNICODE)
# code operators are tokens (and terms): "== vs ===" is not "!= vs !==", "+=" not "-="
_TOKEN = re.compile(r"===|!==|==|!=|&&|\|\||=>|->|\*\*=|//=|\+=|-=|\*=|/=|%=|c\+\+|c#|f#|\.net|"
                    r"[^\W_]+(?:\.\d+|,\d{3}(?!\d))*|[$€£¥%°×*]", re.UNICODE | re.IGNORECASE)
# a single quote opens and closes only beside a non-letter: not the apostrophes of "What's … I'm"
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|«([^»]+)»|(?<![^\W_])'([^']{2,})'(?![^\W_])|‘([^’]+)’")
_DIGITS = re.compile(r"^\d+(?:[.,]\d+)*$")
_MAX_PHRASE = max(len(k) for k in lx.PHRASES)
# A superscript is a power: "x²" reads as "x^2" here and in `numerals.expression_operators`.
SUPERSCRIPT_POWERS = {"²": "^2", "³": "^3"}
# an arrow between two things is "to" ("celsius → fahrenheit")
_SPELLINGS = str.maketrans({"’": "'", "‘": "'", "→": " to ", **SUPERSCRIPT_POWERS})
# Rust's borrowed string slice is its own type: "&str" is not "String"
_STR_SLICE = re.compile(r"&\s*(?:'\w+\s+)?(?:mut\s+)?str\b")
# a time of day is one token however it is typed, on the 24-hour clock: "9am" = "9 a.m." = "9:00 AM" = "09:00"
# = "9 in the morning" → "clock0900", "9.45pm" = "21:45" → "clock2145" (a bare "9:45" is read as written);
# noon and midnight are 12:00 and 00:00.
# A day written as 24 hours is one day ("max dose in 24 hours" = "per day"), and the 24-hour clock is
# military time; "24-hour pharmacy" keeps its number
CLOCK_TOKEN = re.compile(r"^clock\d{4}$")  # what `_clock_of` writes


def _clock_of(hour: int, minute: int, half: str) -> str:
    if half:
        hour = hour % 12 + (12 if half == "p" else 0)
    return f" clock{hour:02d}{minute:02d} "


def _clock(match: re.Match) -> str:
    half = match.group(3).lower() if match.re.groups == 3 else ""  # a bare "21:45" has no am or pm
    return _clock_of(int(match.group(1)), int(match.group(2) or 0), half)


_CLOCK = tuple((re.compile(pattern, re.I), replacement) for pattern, replacement in (
    (r"\b(1[0-2]|0?\d)(?:[:.]([0-5]\d))?\s*([ap])\.?\s?m\b\.?", _clock),
    (r"\b(1[0-2]|0?\d)(?:[:.]([0-5]\d))? (?:o'clock )?(?:in the (morning)|in the (?:afternoon|evening)|at night)\b",
     lambda m: _clock_of(int(m.group(1)), int(m.group(2) or 0), "a" if m.group(3) else "p")),
    (r"(?<![\d:.])\b([01]?\d|2[0-3]):([0-5]\d)\b(?![:.]?\d)", _clock),
    (r"\b(?:12\s*)?noon\b", " clock1200 "), (r"\b(?:12\s*)?midnight\b", " clock0000 "),
    (r"\b24[- ]?(?:hours?|hrs?|h)[- ](?:clock|time|format|notation)\b", "military time"),
    (r"\b24[- ]?(?:hours|hrs)\b|\b24[- ]?(?:hour|hr|h) period\b", "one day"),
))
# powers said in words (`powers_in_symbols`); two-factor authentication is 2FA however it is written
_SQUARED = re.compile(r"(?<![^\W\d_])([a-z]|\d+(?:\.\d+)?)\s+(squared|cubed)\b", re.I)
_TO_THE = re.compile(r"(?<![^\W\d_])([a-z]|\d+(?:\.\d+)?) to the (?:([a-z])|(\d+)(?:st|nd|rd|th)?)(?: power)?"
                     r"(?![^\W\d_])", re.I)
_TWO_FACTOR = re.compile(r"\b(?:two|2)[- ]?(?:factor|step)(?:\s+(?:authentication|auth|verification))?\b", re.I)
# whole larger units said in the smaller are those units: "over 12 months" = "over a year", "14 days" = "2
# weeks", "24 months" = "2 years" (a number counts only the unit it is written with, so the two would differ;
# "24 hours" is the clock's reading above); a decade is ten years ("after a decade" = "in 10 years")
_SMALLER_UNIT = re.compile(r"\b(\d+|twelve|seven|sixty)[- ](days?|months?|minutes?)\b", re.I)
_SPELLED_SIZE = {"twelve": 12, "seven": 7, "sixty": 60}
# the smaller unit → (how many make one larger, one larger unit, the larger in the plural)
_LARGER_UNIT = {"day": (7, " a week ", "weeks"), "month": (12, " a year ", "years"),
                "minute": (60, " an hour ", "hours")}
_DECADE = re.compile(r"\b(?:(?:a|one|1)\s+decade|(\d+)\s+decades)\b", re.I)


def _larger_unit(match: re.Match) -> str:
    written, unit = match.group(1).lower(), match.group(2).lower().rstrip("s")
    size, one, larger = _LARGER_UNIT[unit]
    count = _SPELLED_SIZE.get(written) or int(written)
    if count == size:
        return one
    if written.isdigit() and count > size and count % size == 0:
        return f"{count // size} {larger}"
    return match.group(0)


# "the two" in a comparison are the two things compared ("What separates the two?"), not a count
_THE_TWO = re.compile(r"\b(?:the|those|these)\s+two\b(?!\s*(?:\d|of\b))", re.I)
_CONTRASTING = re.compile(r"\b(?:differ\w*|vs|versus|compar\w*|distinguish\w*|separates?|mix(?:ing|ed)? up|apart)\b",
                          re.I)
# a movement named after another is one word: "Post-Impressionism" ≠ "Impressionism"; so are such adjectives
# ("neo-classical", "post-natal")
_PREFIXED_MOVEMENT = re.compile(r"\b(post|pre|neo|proto)[- ]([^\W\d_]+(?:ism|isms|ist|ists|ic|al))\b", re.I)
# a quarter of the year, not a fourth of something: "each quarter" = "quarterly"
_QUARTER_PERIOD = re.compile(r"\b(?:each|every|per|this|next|last|that)\s+quarter\b", re.I)
# whole days written as hours are those days ("48 hours" = "2 days"); 24 hours is the clock's reading above
_DAYS_IN_HOURS = re.compile(r"\b(48|72|96|120|144|168)(?:[- ]?(?:hours|hrs)|-hour)\b", re.I)
# a minus sign written before a number makes it negative ("-100°F", "2 to the power of -10"), not a dash
# between two things ("x - 1", "5-10 days")
_NEGATIVE = re.compile(r"(?:(?<=^)|(?<=[\s(\[,=]))[-−](?=\d)")
# a mixed number is one number: "2 1/2 cups" = "2.5 cups" = "two and a half cups"
_MIXED_NUMBER = re.compile(r"\b(\d+)\s+([1-9])/([2-9]|1[0-6])\b(?!/)")


def _mixed_number(match: re.Match) -> str:
    whole, numerator, denominator = (int(g) for g in match.groups())
    return f"{whole + numerator / denominator:g}" if numerator < denominator else match.group(0)


_METERS_PER_SECOND = re.compile(r"(?<![\w/])m/s\b")
_ANY_CLOCK = re.compile(r"\d\s*[ap]\.?\s?m\b|\d:\d\d|\b24[- ]?h|\d (?:o'clock )?(?:in the|at night)|noon|midnight",
                        re.I)


def _script(text: str) -> str | None:
    """The most frequent non-Latin script among the letters, or None (Latin or no letters)."""
    if text.isascii():  # most traffic: no character to look up
        return None
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


def language_of(raw_tokens: list[str], text: str) -> str | None:
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


STEMMER = snowballstemmer.stemmer("english")
_CANON: dict[str, str] = {}
for _value in set(lx.CANONICAL.values()):
    _CANON[_value] = _value
for _key, _value in lx.CANONICAL.items():
    _CANON[_key] = _value
_CANON_STEMMED: dict[str, str] = {}
for _key, _value in lx.CANONICAL.items():
    _CANON_STEMMED.setdefault(STEMMER.stemWord(_key), _value)
for _value in set(lx.CANONICAL.values()):
    _CANON_STEMMED.setdefault(STEMMER.stemWord(_value), _value)


def light_stem(word: str) -> str:
    """Snowball (Porter2) stem; short words and tokens with digits are kept as they are. snowballstemmer
    runs the C implementation (PyStemmer, a dependency) when it is installed: identical stems on every
    word of cache/data and the lexicon, and the guard's cold analysis of a text ~6x faster."""
    if not word.isalpha() or len(word) <= 3:
        return word
    return STEMMER.stemWord(word)


def canonical(token: str) -> str:
    if token in _CANON:
        return _CANON[token]
    if not token.isascii():  # "Pokémon" = "Pokemon", "café" = "cafe"; other scripts keep their letters
        folded = "".join(ch for ch in unicodedata.normalize("NFKD", token) if not unicodedata.combining(ch))
        if folded != token and folded.isascii():
            return canonical(folded)
    # sulfurous ≠ sulfuric acid, ferrous ≠ ferric: the stemmer makes both "sulfur"
    if token.endswith(("ous", "ic")) and names_valence(token):
        return token.replace("sulph", "sulf")
    stem = light_stem(token)
    return _CANON_STEMMED.get(stem, stem)


# chemistry names an element's lower and higher valence by -ous and -ic ("nitrous" / "nitric" acid)
_VALENCE = re.compile(r"^(?:hypo|per)?(?:sulf|sulph|nitr|ferr|chlor|phosphor|cupr|stann|plumb|mercur|brom|iod|arsen|"
                      r"selen|mangan|chrom|cobalt|carbon|aur|titan|vanad)\w*(?:ous|ic)$")


def names_valence(token: str) -> bool:
    """An element's -ous / -ic adjective: its own term, which no synonym stands in for."""
    return bool(_VALENCE.match(token))


QUANTITY_NOUNS = frozenset(canonical(w) for w in lx.QUANTITY_NOUNS)


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


# "US" is the country, "us" mostly the pronoun ("tell us"); a lower-case "us" opening a query, after
# "the"/"in"/"a" or before what a country has is the country too ("us passport renewal price", "jobs in the
# us", "first us president")
_US = re.compile(r"\bU\.S\.(?:A\.)?|\bUSA?\b|^\W*us\b|(?<=\bthe )us\b|(?<=\bin )us\b|(?<=\ba )us\b|"
                 r"\bus(?= (?:president|presidents|citizen|citizens|citizenship|dollar|dollars|visa|visas|passport|"
                 r"passports|tax|taxes|army|navy|government|congress|senate|constitution|economy|population|gdp|"
                 r"election|elections|military|embassy|customs|border|flag|federal|holiday|holidays|states|state|"
                 r"residents?|gallons?|shoe|zip)\b)", re.M)
_MAY = re.compile(r"(?<=[^\W\d_] )May\b|\bMay(?= \d)")  # "in May", "May 5"; not "May I …"
_WILL = re.compile(r"\b(a|my|the|your|his|her|their|living) will\b(?! be\b)|\b()will(?= (?:vs|versus)\b)", re.I)
_IT = re.compile(r"\bIT\b")
# calculus written in symbols: "∫(1/x) dx" is an integral, "d/dx (1/x)" a derivative
_CALCULUS = ((re.compile(r"∫"), " integral of "), (re.compile(r"\bd/d[a-z]\b"), " derivative of "))


_DIGIT_LETTER = re.compile(r"\d[A-Za-z]")  # most texts have none: one cheap search decides
_GLUED_UNIT = re.compile(r"(?<![^\W_])(\d+(?:\.\d+)?)([A-Za-z]{1,4})\b")


def _unglued(match: re.Match) -> str:
    """"240km" → "240 km", so the number is read; other letters after digits stay one token ("1080p")."""
    number, unit = match.groups()
    if unit.lower() in lx.GLUED_UNITS or unit in lx.GLUED_LOWER_UNITS or (unit in ("F", "f", "C", "c") and len(number) >= 2):
        return f"{number} {unit}"  # "350F", "180C" (a one-digit "3F" may be a floor or a grade)
    return match.group(0)


# An operator said in words between two numbers is the operator: "3/4 plus 2/3" is "3/4 + 2/3" (not
# before a percentage: "$85 minus 20%" is a discount, which the percentage readings take as written)
_WORD_OPERATOR = re.compile(r"(?<=[\d)])\s+(plus|minus|times|multiplied by|divided by)\s+"
                            r"(?=\(|\d+(?:[.,]\d+)*(?!\s*(?:%|percent)|[.,\d]))", re.I)
_WORD_OPERATORS = {"plus": "+", "minus": "-", "times": "*", "multiplied by": "*", "divided by": "/"}


_OPERATOR_HINTS = ("plus", "minus", "times", "by")  # each match of _WORD_OPERATOR holds one, in lower case


_TIMES_X = re.compile(r"(?<=\d)\s+[xX]\s+(?=\d)")


def operators_in_symbols(text: str) -> str:
    low = text.lower()
    if not any(word in low for word in _OPERATOR_HINTS):  # most texts say none: a substring test decides
        return text
    return _WORD_OPERATOR.sub(lambda m: f" {_WORD_OPERATORS[m.group(1).lower()]} ", text)


# "sugar-free" is "without sugar"; so is "tax free" for the nouns that make such compounds ("is the museum
# free" is no museum-free)
_FREE_OF = re.compile(r"\b([^\W_]+)-free\b|\b(tax|duty|toll|sugar|gluten|fat|dairy|lactose|caffeine|alcohol|"
                      r"interest|rent|fee|commission|smoke|debt|risk|cruelty)\s+free\b", re.I)


_CONTRACTION = re.compile(r"\b(i)'m\b|'(re|ll|ve|m)\b", re.I)
_CONTRACTED = {"re": " are", "ll": " will", "ve": " have", "m": " "}


def _written_out(match: re.Match) -> str:
    return "I am" if match.group(1) else _CONTRACTED[match.group(2).lower()]


def _thousands(match: re.Match) -> str:
    return f"{float(match.group(1)) * 1000:g}"


# chat spellings read as what they stand for: a contraction typed without its apostrophe ("doesnt" is a
# negation, "whos" is "who is"), "u"/"ur" (not the option "-u"), "w/o", "thru"; "10k" is 10 thousand
# ("10k steps", "$200k"), but a 10 km race before "run"/"race" or a conversion to miles
_CASUAL = tuple((re.compile(pattern, flags), replacement) for pattern, replacement, flags in (
    (r"\b(do|does|did|is|are|was|were|should|would|could|has|have|had|must|need)nt\b", r"\1 not", re.I),
    (r"\bcant\b", "can not", re.I), (r"\bdont\b", "do not", re.I), (r"\bwont\b", "will not", re.I),
    (r"\b(who|what|where|when|how|that|there)s\b", r"\1 is", re.I), (r"\b(they|you)re\b", r"\1", re.I),
    (r"\b(i|you|we|they)ve\b", r"\1", re.I), (r"\b[Ii]m\b", "i", 0),
    (r"(?<![-\w])u\b(?!-)", "you", 0), (r"(?<![-\w])ur\b(?!-)", "your", 0),
    (r"\bw/o\b", " without ", re.I), (r"\bthru\b", "through", re.I),
    (r"\b(\d+(?:\.\d+)?)k\b(?=\s*(?:runs?|races?|to miles|in miles)\b)", r"\1 km", re.I),
    (r"\b(?!401k\b)(\d+(?:\.\d+)?)k\b", _thousands, re.I),
    (r"\b(\d{1,3})\s*y/?o\b", r"\1 year old", re.I),  # "my 8yo", "8 y/o"
    # "wat"/"wut" are "what" ("wats" "what is"), "b4" "before", "btwn" "between", "outta" "out of", "w/"
    # "with"; "calc" after "to"/"do" is a verb (not LibreOffice Calc); "y" opening a question is "why" (not
    # "y = 2x"); "r" after a question word or a plural in a question, or opening one before a pronoun, is "are"
    # (not the R language: "r vs python", "stats r package"); "till" before who or when is "until" (not a cash
    # till); "n" between two words is "and" (not a variable: "for n in", "n choose k")
    (r"\b(?:wat|wut)s\b", "what is", re.I), (r"\b(?:wat|wut)\b", "what", re.I), (r"\bb4\b", "before", re.I),
    (r"\bbtwn\b", "between", re.I), (r"\boutta\b", "out of", re.I),
    (r"\bw/(?=\s)", "with", re.I),
    (r"\b(to|do|i|you|u) calc\b", r"\1 calculate", re.I),
    (r"^\s*y(?=\s+(?:do|does|did|is|are|was|were|can|cant|would|should|shouldnt|dont|doesnt|my|the|am)\b)", "why",
     re.I),
    (r"\b(what|wat|who|where|how|why|when|which|there|they|you|u|we|these|those) r (?=[a-z])", r"\1 are ", 0),
    (r"^(\s*(?:which|what|wat|wut|how|why|where|when|do|does)\b.*?\b[a-z]{2,}s) r (?=[a-z])", r"\1 are ", 0),
    (r"^\s*r (?=(?:you|we|they|there|these|those)\b)", "are ", re.I),  # "r u allowed to …"
    (r"\btill?\b(?=\s+(?:i|you|we|they|he|she|it|the|my|your|next|then|now|\d))", "until", re.I),  # "how long till i …"
    (r"\b(?!(?:for|let|where|if|of|to|when|is|and|by|with|over|from|at|in|as|calculate|compute|find|solve|get|"
     r"choose|times|plus|minus|log)\b)([a-z]{2,}) n (?=(?!(?:in|is|choose|factorial|log|squared|cubed|times|plus|minus|"
     r"over|th)\b)[a-z])", r"\1 and ", 0),
))

_ANY_CASUAL = re.compile(  # most texts hold none of them: one search decides
    "|".join(f"(?i:{p.pattern})" if p.flags & re.I else p.pattern for p, _ in _CASUAL))


def _year_span(match: re.Match) -> str:
    first, second = int(match.group(1)), match.group(2)
    if int(second[-2:]) != (first + 1) % 100:
        return match.group(0)  # not one year to the next: an expression or a range
    return f"{first} {(first + 1) % 100:02d}"


# a (tax or school) year written as a span is one period however it is written: "2024/25" = "2024-25" =
# "2024/2025"; "from April 2024" is "since April 2024", the opposite of "before April 2024"
_YEAR_SPAN = re.compile(r"\b((?:19|20)\d{2})\s*[-/–]\s*((?:19|20)?\d{2})\b")
_FROM_DATE = re.compile(r"\bfrom(?=\s+(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                        r"[a-z]*\.?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?(?:19|20)\d{2}\b)", re.I)


def powers_in_symbols(text: str) -> str:
    """"x squared" written "x^2", "5 cubed" "5^3", "2 to the x" "2^x", "10 to the 3rd power" "10^3": one
    expression however it is said ("to the power of" is read as an operation of its own)."""
    if "squared" in text or "cubed" in text:
        text = _SQUARED.sub(lambda m: f"{m.group(1)}^{2 if m.group(2).lower() == 'squared' else 3}", text)
    if " to the " in text:
        text = _TO_THE.sub(lambda m: f"{m.group(1)}^{m.group(2) or m.group(3)}", text)
    return text


def year_spans_read(text: str) -> str:
    """The text with each year span written as two numbers ("2024/25" → "2024 25"): no division, no
    subtraction for the expression readings."""
    return _YEAR_SPAN.sub(_year_span, text) if ("20" in text or "19" in text) else text


def tokenize(text: str) -> list[str]:
    """The text's tokens, lower case, with the rewritings below; a new list each call (callers edit it)."""
    return list(tokens_of(text))


@lru_cache(maxsize=65536)
def tokens_of(text: str) -> tuple[str, ...]:
    """`tokenize`'s reading, once per text: the guard reads a new text's tokens in several checks (its
    asking sentence, the words said in another language, field labels), each of which used to tokenize
    it again, ~0.15 ms a time on a 2-core CPU."""
    text = text.translate(_SPELLINGS)
    if "20" in text or "19" in text:
        text = _FROM_DATE.sub("since", year_spans_read(text))
    if "&" in text:
        text = _STR_SLICE.sub(" str slice ", text)
    if "/" in text:
        text = _MIXED_NUMBER.sub(_mixed_number, text)
    if "/s" in text:
        text = _METERS_PER_SECOND.sub(" meters per second ", text)
    if "-" in text or "−" in text:
        text = _NEGATIVE.sub(" minus ", text)
    if ("hour" in text or "hrs" in text) and _DAYS_IN_HOURS.search(text):
        text = _DAYS_IN_HOURS.sub(lambda m: f"{int(m.group(1)) // 24} days", text)
    text = powers_in_symbols(text)
    if "factor" in text or "step" in text:  # "two-factor authentication" is "2FA"
        text = _TWO_FACTOR.sub(" 2fa ", text)
    if "month" in text or "days" in text or "minutes" in text:
        text = _SMALLER_UNIT.sub(_larger_unit, text)
    if "decade" in text:
        text = _DECADE.sub(lambda m: f" {int(m.group(1)) * 10 if m.group(1) else 10} years ", text)
    if "two" in text and _CONTRASTING.search(text):
        text = _THE_TWO.sub(" both ", text)
    if _PREFIXED_MOVEMENT.search(text):
        text = _PREFIXED_MOVEMENT.sub(lambda m: m.group(1) + m.group(2), text)
    if "quarter" in text:
        text = _QUARTER_PERIOD.sub(" quarterly ", text)
    if _ANY_CLOCK.search(text):
        for pattern, replacement in _CLOCK:
            text = pattern.sub(replacement, text)
    for symbol, words in _CALCULUS:
        text = symbol.sub(words, text)
    text = operators_in_symbols(text)
    if " x " in text or " X " in text:  # "7 x 8" is a product; "solve for x" names a variable
        text = _TIMES_X.sub(" × ", text)
    if _DIGIT_LETTER.search(text):
        text = _GLUED_UNIT.sub(_unglued, text)
    text = _US.sub(" USA ", text)
    # content words that are spelled like function words: the month, the legal document, the agency
    text = _MAY.sub(" maymonth ", text)
    text = _WILL.sub(lambda m: f"{m.group(1) or ''} testament", text)
    if not text.isupper():
        text = _IT.sub(" infotech ", text)
    if "free" in text or "Free" in text or "FREE" in text:
        text = _FREE_OF.sub(lambda m: f"without {m.group(1) or m.group(2)}", text)
    # a form's or a plan's name is one word however it is written: "W-2" = "w2", "401(k)" = "401k"
    text = _FORM_DASH.sub(r"\1\2", text)
    text = _PLAN_PAREN.sub(r"\1\2", text)
    text = _CANT.sub("can not", text)
    text = _WONT.sub("will not", text)
    text = _NT.sub(" not", text)
    # written out where the word is known, so a quoted sentence reads alike either way ("I'm allergic" =
    # "I am allergic"); "'s" (a possessive too) and "'d" (had or would) are dropped
    if "'" in text:
        text = _CONTRACTION.sub(_written_out, text)
    text = _S_OR_D.sub(" ", text)
    tokens = _split(text)
    # only in English: French "dont" and German "im" are words of their own
    if _ANY_CASUAL.search(text) and language_of(tokens, text) in (None, "en"):
        for pattern, replacement in _CASUAL:
            text = pattern.sub(replacement, text)
        tokens = _split(text)
    return tuple(tokens)


_FORM_DASH = re.compile(r"\b([A-Z])-(\d+[A-Za-z]?)\b")
_PLAN_PAREN = re.compile(r"\b(\d+)\(([a-z])\)", re.I)
_CANT = re.compile(r"\bcan't\b", re.I)
_WONT = re.compile(r"\bwon't\b", re.I)
_NT = re.compile(r"n't\b", re.I)
_S_OR_D = re.compile(r"'(s|d)\b", re.I)


_SENTENCE_BREAK = re.compile(r"(?<=[.!?:;])\s+|\s+[—–-]+\s+")
_FULL_STOP = re.compile(r"(?<=[.!?])\s+")


def asking_sentence(text: str, *, full_stops_only: bool = False) -> tuple[tuple[str, ...], int]:
    """The text's sentences and the index of the one that asks: the last with a question mark, else the
    last ("My son has a test tomorrow. When did WW1 start?" asks in its second). `full_stops_only`: split
    only after ".", "!" or "?", not at a colon or a dash ("Cleaning a skillet - what's the right method?")."""
    sentences = tuple(s for s in (_FULL_STOP if full_stops_only else _SENTENCE_BREAK).split(text.strip()) if s)
    if not sentences:
        return ("",), 0
    return sentences, max((i for i, s in enumerate(sentences) if "?" in s), default=len(sentences) - 1)


def asked_part(text: str) -> str:
    """The sentence that asks, when full sentences of context come before it and it does not point back into
    them ("My son has a test on the first Harry Potter book. How many books are there?"); else the whole text
    ("I just watched the first Alien. Who directed it?")."""
    sentences, asking = asking_sentence(text, full_stops_only=True)
    if asking == 0 or lx.POINTING_BACK & set(tokenize(sentences[asking])):
        return text
    return sentences[asking]


def _split(text: str) -> list[str]:
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    merged: list[str] = []
    for t in tokens:  # "°" + "c" → "°c"
        if merged and merged[-1] == "°" and t in ("c", "f"):
            merged[-1] = "°" + t
        else:
            merged.append(t)
    return merged


def parse_number(token: str) -> float | None:
    if _DIGITS.match(token):
        try:
            return float(token.replace(",", ""))
        except ValueError:
            return None
    return None


def named_words(text: str) -> set[str]:
    """Words that would be light, phrasing or function words but are written as part of a name: a light
    word capitalised mid-sentence ("Mexico City", "the City of London") and a phrasing or function word
    capitalised after a capitalised word ("The Little Prince"). They are terms there."""
    words = WORD.findall(text)
    named = {w.lower() for w in words[1:] if w[:1].isupper() and not w.isupper() and w.lower() in lx.LIGHT}
    named |= {w.lower() for i, (prev, w) in enumerate(zip(words, words[1:]))
              if i > 0 and w[:1].isupper() and not w.isupper() and prev[:1].isupper() and prev != "I"
              and (w.lower() in lx.FUNCTION or w.lower() in lx.SCAFFOLD)}
    return named


def said_words(tokens: list[str]) -> set[str]:
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


def _quoted(text: str) -> list[list[str]]:
    """The tokens of each quoted span, whichever quote marks enclose it."""
    return [tokenize(next(g for g in match.groups() if g)) for match in _QUOTED.finditer(text)]


def quoted_words(text: str) -> set[str]:
    return {canonical(t) for span in _quoted(text) for t in span}


def quoted_spans(text: str) -> tuple[str, ...]:
    """Each quoted span as written, lower case, its words joined without spaces ("good night" and
    "goodnight" are one span): the literal text a spelling, rhyme or translation request is about."""
    return tuple(sorted("".join(span) for span in _quoted(text)))


CODE_SPAN = re.compile(r"`+([^`]+)`+")  # code between backticks (one or more on each side)


def code_spans(text: str) -> tuple[str, ...]:
    """Each code span (between backticks) as written, spaces collapsed: code is taken literally
    ("`typeof typeof null`" is not "`typeof null`", "`range(10, 1, -2)`" not "`range(1, 10, 2)`")."""
    return tuple(sorted({" ".join(m.group(1).split()) for m in CODE_SPAN.finditer(text)} - {""}))


_KEEP = frozenset("keep keeps kept keeping".split())
# nouns and adjectives spelled like a participle, which "keep" stores rather than repeats ("keep cooking oil")
_ING_NOUNS = frozenset("""cooking baking drinking sparkling frosting stuffing dressing stocking clothing bedding
filling icing pudding dumpling seasoning topping wedding building setting ceiling morning evening something
anything everything nothing thing things king ring rings spring string strings wing wings sibling siblings
sterling shopping parking camping fishing hunting swimming running housing heating""".split())


def _without_aspectual_keep(tokens: list[str]) -> list[str]:
    """Drop a "keep" that says something goes on happening ("my breaker keeps tripping", "it keeps on
    crashing"): the question is why it trips, and "keep" would otherwise read as "store"."""
    if not _KEEP.intersection(tokens):
        return tokens
    out = []
    for i, tok in enumerate(tokens):
        if tok in _KEEP:
            j = i + 2 if tokens[i + 1:i + 2] == ["on"] else i + 1
            after = tokens[j] if j < len(tokens) else ""
            if len(after) > 5 and after.endswith("ing") and after not in _ING_NOUNS:
                continue
        out.append(tok)
    return out


@lru_cache(maxsize=65536)
def phrased_tokens(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tokens, tokens with multi-word phrases rewritten): shared by `analyse` and `surface`, which
    would otherwise tokenize every new text twice on the hit path."""
    raw = _without_aspectual_keep(tokenize(text))
    return tuple(raw), tuple(_apply_phrases(raw))


@lru_cache(maxsize=65536)
def surface(text: str) -> tuple[dict[str, str], frozenset[str]]:
    """canonical term → the word as written (lower case), and the words written capitalised mid-sentence
    or in capitals (entity-like: 'Java', 'NATO')."""
    mapping: dict[str, str] = {}
    for tok in phrased_tokens(text)[1]:
        mapping.setdefault(canonical(tok), tok)
    capitalised = set()
    for i, match in enumerate(WORD.finditer(text)):
        word = match.group(0)
        if (i > 0 and word[:1].isupper()) or (len(word) >= 2 and word.isupper()):
            capitalised.add(word.lower())
    return mapping, frozenset(capitalised)
