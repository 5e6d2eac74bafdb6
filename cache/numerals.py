"""Numbers as the near-miss guard compares them (`cache.guard`): digits, number words spelled the way
English spells one number, fractions in words read as their digits, ordinals, roman numerals, and
operations whose operands do not commute."""

from __future__ import annotations

import re

from cache import lexicon as lx
from cache.wording import SUPERSCRIPT_POWERS, operators_in_symbols, parse_number

# Operations whose operands do not commute: "4/3" ≠ "3/4", "2 to the power of 10" ≠ "10 to the power of 2",
# and ratios: a "16:9" video is not a "9:16" one
_NUM = r"(\d+(?:[.,]\d+)?)"
_SYMBOLIC = r"/|÷|\^|\*\*|-|−"
OPERATION = re.compile(_NUM + r"\s*(" + _SYMBOLIC + r"|:| divided by | over | to the power of | minus )\s*" + _NUM, re.I)
# The same with a single-letter variable on either side: "2^x" ≠ "x^2", "x/2" ≠ "2/x", "x - 1" ≠ "1 - x"
_OPERAND = r"(\d+(?:[.,]\d+)?|(?<![^\W\d_])[a-z](?![^\W\d_]))"
VARIABLE_OPERATION = re.compile(_OPERAND + r"\s*(" + _SYMBOLIC + r")\s*" + _OPERAND, re.I)
# A range runs one way: counting "from 1 to 10" is not "from 10 down to 1"
RANGE = re.compile(_NUM + r"\s+(?:(?:down|up|back)\s+)?(?:to|through|thru|until|till)\s+" + _NUM, re.I)
OPERATOR = {"/": "div", "÷": "div", "divided by": "div", "over": "div", "^": "pow", "**": "pow",
            "to the power of": "pow", "-": "sub", "−": "sub", "minus": "sub", ":": "ratio"}

# A version whose last digit is a zero: as a float "3.10" is "3.1", but Python 3.10 is not Python 3.1
_VERSION = re.compile(r"(?:([A-Za-z])|([A-Za-z][\w+#-]*)\s+)(\d+\.\d*0)(?![\d.,])")


def trailing_zero_decimals(text: str) -> tuple[str, ...]:
    """Version numbers written with a final zero ("Python 3.10", "Go 1.20", "v2.0"), which the numbers'
    values cannot tell from the same number without it. Not amounts: "$1.50" is "$1.5", "a 3.0 GPA" is
    "a 3 GPA" (a number after a function word or a symbol is no version)."""
    return tuple(sorted(m.group(3) for m in _VERSION.finditer(text)
                        if m.group(1) or m.group(2).lower() not in lx.FUNCTION))


# A point's coordinates in order: "(3, 2)" is not "(2, 3)", though both have the numbers 2 and 3
_POINT = re.compile(r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)(?:\s*,\s*(-?\d+(?:\.\d+)?))?\s*\)")


def coordinate_points(text: str) -> frozenset[tuple[float, ...]]:
    """The points written as coordinates in brackets ("the line through (3, 2) and (11, 6)"), each a tuple
    in the order written; which point comes first does not matter to the answer, the order within one does."""
    if "(" not in text:
        return frozenset()
    return frozenset(tuple(float(v) for v in m.groups() if v is not None) for m in _POINT.finditer(text))


# The operators of a written expression, in order: "2x + 5 = 15" has (+, =), "2x - 5 = 15" (-, =). An
# operator counts between two operands that are numbers, single-letter variables, brackets or a named
# function ("x^2 / sin(x)"), so "x-ray", "tram-train" and "COVID-19" have none.
_FUNCTIONS = r"(?:sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|sinh|cosh|tanh|log|ln|exp|sqrt)"
_EXPRESSION_OPERATOR = re.compile(r"(?:(?<![^\W\d_])[a-z]|\d|\))\s*(<=|>=|!=|[-+*/^=<>])\s*"
                                  r"(?=\d|[a-z](?![^\W\d_])|\(|" + _FUNCTIONS + r"\b)", re.I)
# A named function and what it is applied to: "sin(x^2)" is not "sin(x)"; "sin x" = "sin(x)"
_FUNCTION_CALL = re.compile(r"\b(" + _FUNCTIONS + r")(?:\s*\(([^()]*)\)|\s+([a-z](?![a-z])[\d^]*|\d[\d^.]*))", re.I)
_OPERATOR_SPELLINGS = str.maketrans({"−": "-", "–": "-", "×": "*", "÷": "/", "≤": "<=", "≥": ">=", "≠": "!=",
                                     **SUPERSCRIPT_POWERS})


def expression_operators(text: str) -> tuple[str, ...]:
    """The operators of the text's math expressions, in order ("x² − 9" → ("^", "-"))."""
    text = text.translate(_OPERATOR_SPELLINGS)
    text = operators_in_symbols(text)
    operators = tuple(m.group(1) for m in _EXPRESSION_OPERATOR.finditer(text))
    if len(operators) >= 2 and len(set(operators)) == 1 and operators[0] in "-/":
        return ("-",) * len(operators)  # a list or a date, not arithmetic: "50/30/20" = "50-30-20"
    return operators


def function_calls(text: str) -> frozenset[tuple[str, str]]:
    """(function, argument) for each named function applied in the text ("sin(x^2)" → ("sin", "x^2"))."""
    text = text.translate(_OPERATOR_SPELLINGS)
    return frozenset((m.group(1).lower(), re.sub(r"\s+", "", (m.group(2) or m.group(3)).lower()))
                     for m in _FUNCTION_CALL.finditer(text))


def _joins(current: int, value: int, after_scale: bool) -> bool:
    """May number word `value` continue the number `current` spelled so far? "forty" + "two", "hundred" +
    "five" do; "seven" + "eight" ("multiply seven and eight") and "four-seven-eight" are separate numbers."""
    if current == 0 or after_scale:
        return current == 0 or value < 100
    return 20 <= current % 100 <= 90 and current % 10 == 0 and value < 10


def read_numbers(tokens: list[str]) -> tuple[list[float], list[int], list[bool], dict[int, float],
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
            numerator = parse_number(before)  # "2 thirds"
        else:
            numerator = 1 if tok in lx.FRACTIONS else None  # "half", "quarter" alone
        if denominator and numerator and not plural and before in ("a", "an") and i >= 3 \
                and tokens[i - 2] == "and" and (i - 3 in ends or tokens[i - 4:i - 3] in (["a"], ["an"], ["one"])
                                                or tokens[i - 3] == "time"):
            # "two and a half" is 2.5, as "an hour and a half", "a year and a half", "time and a half" are 1.5
            whole = ends.pop(i - 3, None)
            if whole is None:
                whole = 1.0
            elif values and values[-1] == whole:
                values.pop()  # the whole number was read already
            used[i] = used[i - 1] = used[i - 2] = True
            values.append(whole + 1 / denominator)
            ends[i] = whole + 1 / denominator
            continue
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
            number = parse_number(tok)
            if number is not None and before in lx.ORDINAL_NOUNS and number.is_integer():
                ordinals.append(int(number))  # "season 1" = "first season"
                used[i] = True
            elif number is not None:
                values.append(number)
                ends[i] = number
                used[i] = True
            elif tok in lx.ORDINALS and not (tok == "second" and (before == "per" or i > 0 and parse_number(before))) \
                    and not (tok == "first" and before == "at"):  # "than it did at first" counts nothing
                ordinals.append(lx.ORDINALS[tok])
                used[i] = True
            elif tok in lx.ROMAN and i > 0:
                values.append(float(lx.ROMAN[tok]))
                used[i] = True
    flush()
    # "one banana" and "a banana" ask the same thing: a lone 1 carries no information.
    values = [v for v in values if v != 1.0]
    return values, ordinals, used, ends, divisions
