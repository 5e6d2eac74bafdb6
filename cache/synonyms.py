"""WordNet synonymy for the near-miss guard: may one word stand for another in a question?

"Which desert is the biggest on Earth?" asks what "… in the world?" asks, and "Creating a bar graph"
what "make a bar chart" does; the guard's `terms` check used to refuse both for an unmatched word.
Sentence and word embeddings cannot tell such swaps from the near-misses' swaps ("list"/"string",
"boiling"/"freezing"): measured on cache/data, a swapped word's contextual similarity is as high in
near-misses as in paraphrases. WordNet can: synonyms share a synset, co-hyponyms do not.

Rule: two words are synonymous when they share a synset (directly, or through WordNet's lexical
derivation link: "speaker"/"speak", "leaky"/"leak") that is the *first* sense of one of them and among
the first `OTHER_RANK + 1` senses of the other. Rare shared senses are what turn WordNet's breadth
into false hits ("sea"/"ocean" share only a figurative second sense, "minute"/"hour" a sixth), while
"earth"/"world" share earth's first sense and world's fourth. A word written capitalised counts only
with its name senses ("Java" is not "coffee"), and two names must share the first sense of both
("Taiwan" is the first sense of a synset that is a later sense of "China"). Chosen on the dev split;
the two-names rule on the train split's near-misses.

The table (cache/model/synonyms.json.gz, 0.8 MB) is built from Princeton WordNet 3.0 by
`python -m cache.build_synonyms`; words are lemmatised with WordNet's own rules (morphy: suffix
rules plus the irregular-form lists).
"""

from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path

import structlog

from cache.load_once import LoadOnce

log = structlog.get_logger("switchyard.cache.synonyms")

TABLE_PATH = Path(__file__).parent / "model" / "synonyms.json.gz"
OTHER_RANK = 3
# WordNet's morphy suffix rules (noun, verb and adjective detachments), tried in this order.
_SUFFIXES = (
    ("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
    ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""),
    ("er", ""), ("est", ""), ("er", "e"), ("est", "e"),
)
_VOWEL = re.compile("[aeiouy]")


class SynonymTable:
    def __init__(self, path: Path = TABLE_PATH) -> None:
        data = json.loads(gzip.decompress(path.read_bytes()))
        self._lemmas: dict[str, list[int]] = data["lemmas"]
        self._exceptions: dict[str, list[str]] = data["exceptions"]

    def lemmas(self, word: str) -> tuple[str, ...]:
        """The WordNet lemmas a word form may be (morphy): itself, irregular forms, suffix rules."""
        word = word.lower()
        candidates = [word, *self._exceptions.get(word, ())]
        if _VOWEL.search(word):  # a word without a vowel is an abbreviation: "https" is no plural of "http"
            candidates += [word[:-len(suffix)] + ending for suffix, ending in _SUFFIXES
                           if word.endswith(suffix) and len(word) > len(suffix) + 1]
        return tuple(dict.fromkeys(c for c in candidates if c in self._lemmas))

    def senses(self, word: str, name: bool = False) -> dict[int, int]:
        """synset id → the best sense rank any lemma of the word has for it (0 = most frequent). A word
        written capitalised (`name`) has only the senses in which WordNet writes it so: "Earth" is the
        planet, "Java" the island or the language, never the coffee."""
        out: dict[int, int] = {}
        for lemma in self.lemmas(word):
            flat = self._lemmas[lemma]
            for ident, code in zip(flat[::2], flat[1::2]):
                rank, is_name = divmod(code, 2)
                if (is_name or not name) and rank < out.get(ident, rank + 1):
                    out[ident] = rank
        return out

    def synonymous(self, a: str, b: str, a_name: bool = False, b_name: bool = False, strict: bool = False) -> bool:
        sa, sb = _senses(self, a, a_name), _senses(self, b, b_name)
        if len(sa) > len(sb):
            sa, sb = sb, sa
        # two names must share their first sense: "Taiwan" is WordNet's first sense of a synset that is
        # only a later sense of "China"; "Earth" (a name) and "world" keep the ordinary rule
        limit = 0 if (a_name and b_name) or strict else OTHER_RANK
        for ident, rank in sa.items():
            other = sb.get(ident)
            if other is not None and min(rank, other) == 0 and max(rank, other) <= limit:
                return True
        return False


@lru_cache(maxsize=65536)
def _senses(table: SynonymTable, word: str, name: bool) -> dict[int, int]:
    return table.senses(word, name)


_TABLE = LoadOnce(SynonymTable, log, "synonym_table_unavailable", path=str(TABLE_PATH))


def table() -> SynonymTable | None:
    """The shared table, loaded at first use; None (the guard then goes without) if it cannot load."""
    return _TABLE.get()


# Synsets that merge what a question tells apart (found by probes; each a wrong hit): a company's
# president is not its chairman, a toad is not a frog, renting a car is not leasing one, an elk not a moose;
# a "bike" is WordNet's motorcycle first, but mostly a bicycle when people ask about one
DISTINCT = frozenset(map(frozenset, [("president", "chairman"), ("president", "chair"), ("frog", "toad"),
                                     ("rent", "lease"), ("elk", "moose"), ("bike", "motorcycle"),
                                     # (stop 28: each served a near-miss once another word was read)
                                     ("hare", "rabbit"), ("acceleration", "speed"), ("acceleration", "velocity"),
                                     ("nap", "sleep"), ("grill", "broil")]))


def synonymous(a: str, b: str, a_name: bool = False, b_name: bool = False, strict: bool = False) -> bool:
    """Are the words synonyms? `a_name`/`b_name`: the word is written capitalised (see `senses`); `strict`:
    only if they share the first sense of both (as two names must)."""
    t = table()
    if t is None or not t.synonymous(a, b, a_name, b_name, strict):
        return False
    return not any(frozenset((x, y)) in DISTINCT for x in t.lemmas(a) for y in t.lemmas(b))
