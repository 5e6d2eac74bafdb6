from __future__ import annotations

import pytest

from cache.evalset import load_groups
from cache.guard import verify, verify_rules

REFUSED = [  # (query, cached, the check that must refuse)
    ("What is the capital of Austria?", "What is the capital of Australia?", "terms"),
    ("Convert 10 kilometers to miles.", "Convert 10 miles to kilometers.", "direction"),
    ("Convert 12 miles to kilometers.", "Convert 10 miles to kilometers.", "numbers"),
    ("Who was the second person to walk on the moon?", "Who was the first person to walk on the moon?", "numbers"),
    ("What is 25% of 80?", "What is 15% of 80?", "numbers"),
    ("What percent of 80 is 15?", "What is 15% of 80?", "numbers"),
    ("Why is it not safe to eat raw cookie dough?", "Is it safe to eat raw cookie dough?", "negation"),
    ("How many grams are in a pound?", "How many ounces are in a pound?", "terms"),
    ("How do I unset an environment variable in Linux?", "How do I set an environment variable in Linux?", "terms"),
    ("What is the smallest ocean on Earth?", "What is the largest ocean on Earth?", "poles"),
    ("How do I turn on notifications on Android?", "How do I turn off notifications on Android?", "poles"),
    ("What is the capital of France?", "Quelle est la capitale de la France ?", "language"),
    ("When was penicillin discovered?", "Who discovered penicillin?", "question"),
    ("How do I convert an integer to a string in JavaScript?", "How do I convert a string to an integer in JavaScript?", "direction"),
    ("How long does it take to fly from New York to London?", "How long does it take to fly from London to New York?", "direction"),
    ("Did it rain in Seattle yesterday?", "Is it going to rain in Seattle tomorrow?", "poles"),
    ("Should I use a comma before \"that\"?", "Should I use a comma before \"which\"?", "terms"),
    ("How do I declare a constant in C#?", "How do I declare a constant in C++?", "terms"),
]
SERVED = [
    ("Which city is Australia's capital?", "What is the capital of Australia?"),
    ("10 miles in km?", "Convert 10 miles to kilometers."),
    ("How many kilometers are in 10 miles?", "Convert 10 miles to kilometers."),
    ("Calculate fifteen percent of 80.", "What is 15% of 80?"),
    ("ww2 ended in which year", "What year did World War II end?"),
    ("When did the Second World War end?", "What year did World War II end?"),
    ("How many people live in Canada?", "What is the population of Canada?"),
    ("At what temperature in Fahrenheit does water boil?", "What is the boiling point of water in Fahrenheit?"),
    ("How can I disable notifications on Android?", "How do I turn off notifications on Android?"),
    ("what's the colour of the sky", "What is the color of the sky?"),
]


@pytest.mark.parametrize(("query", "cached", "reason"), REFUSED)
def test_near_misses_are_refused_by_the_right_check(query, cached, reason):
    verdict = verify(query, cached)
    assert not verdict.ok and verdict.reason == reason, verdict
    assert not verify(cached, query).ok  # and the other way round


@pytest.mark.parametrize(("query", "cached"), SERVED)
def test_paraphrases_pass_the_rules(query, cached):
    # the rules alone; the learned stage after them may still refuse (tests/cache/test_verifier.py)
    assert verify_rules(query, cached).ok, verify_rules(query, cached)


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_guard_refuses_the_labelled_near_misses(split):
    """Quality floor on the hand-labelled set (not a timing): the guard refuses ≥ 99% of the near-misses
    against their own question, and serves a meaningful share of the paraphrases."""
    groups = load_groups(split)
    near = [(t, g.query) for g in groups for _, t in g.near_misses]
    para = [(p, g.query) for g in groups for p in g.paraphrases]
    refused = sum(not verify(q, c).ok for q, c in near) / len(near)
    served = sum(verify(q, c).ok for q, c in para) / len(para)
    assert refused >= 0.99, refused
    assert served >= 0.35, served


def test_stemming_runs_on_the_c_snowball():
    # PyStemmer (a dependency) gives the same Porter2 stems as the pure-Python snowballstemmer and
    # makes the guard's analysis of a new text ~6x faster; without it every lookup pays ~1 ms more.
    from cache import guard

    assert type(guard._STEMMER).__module__ == "Stemmer"
    assert [guard.light_stem(w) for w in ("running", "boiling", "generously", "kilometres")] == \
        ["run", "boil", "generous", "kilometr"]
