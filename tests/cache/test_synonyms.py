from __future__ import annotations

import gzip
import json

import pytest

from cache import build_synonyms, guard, synonyms

SYNONYMS = [("world", "earth"), ("graph", "chart"), ("quit", "stop"), ("speakers", "spoken"),
            ("leaking", "leaky"), ("feb", "february"), ("stomach", "belly")]
# Co-hyponyms and rare shared senses: what the near-misses swap.
NOT_SYNONYMS = [("list", "string"), ("boiling", "freezing"), ("sea", "ocean"), ("minutes", "hours"),
                ("big", "great"), ("arms", "legs"), ("sort", "reverse")]


@pytest.mark.parametrize(("a", "b"), SYNONYMS)
def test_wordnet_synonyms_share_a_dominant_sense(a, b):
    assert synonyms.synonymous(a, b) and synonyms.synonymous(b, a)


@pytest.mark.parametrize(("a", "b"), NOT_SYNONYMS)
def test_co_hyponyms_and_rare_senses_are_not_synonyms(a, b):
    assert not synonyms.synonymous(a, b) and not synonyms.synonymous(b, a)


def test_lemmatiser_uses_wordnet_irregular_forms_and_suffix_rules():
    table = synonyms.table()
    assert "go" in table.lemmas("went") and "mouse" in table.lemmas("mice")
    assert "leak" in table.lemmas("leaking") and "speaker" in table.lemmas("speakers")
    assert table.lemmas("qwxz") == ()


@pytest.mark.parametrize(("query", "cached"), [
    ("Which desert is the biggest on Earth?", "What is the largest desert in the world?"),
    ("Creating a bar graph with Python, how?", "How do I make a bar chart in Python?"),
    ("How can I get my dog to quit barking at night?", "How do I get my dog to stop barking at night?"),
])
def test_guard_serves_a_paraphrase_that_swaps_in_a_synonym(query, cached):
    assert guard.verify_rules(query, cached).ok, guard.verify_rules(query, cached)
    assert guard.verify_rules(cached, query).ok


@pytest.mark.parametrize(("query", "cached"), [
    ("How many minutes are in a week?", "How many hours are in a week?"),  # units: the word itself
    ("What is the largest sea on Earth?", "What is the largest ocean on Earth?"),  # a figurative sense only
    ("What's the population of New York State?", "What's the population of New York City?"),  # names
    ("How do I reverse a string in Python?", "How do I reverse a list in Python?"),
])
def test_guard_still_refuses_swaps_wordnet_does_not_license(query, cached):
    verdict = guard.verify_rules(query, cached)
    assert not verdict.ok and verdict.reason == "terms", verdict


def test_a_capitalised_word_has_only_its_name_senses():
    # WordNet lists 'java' with 'coffee' and 'Earth' with 'world': the island and the language, written
    # capitalised, are not coffee; the planet is the world.
    assert synonyms.synonymous("java", "coffee") and not synonyms.synonymous("java", "coffee", a_name=True)
    assert synonyms.synonymous("earth", "world", a_name=True)
    assert guard.verify_rules("is java good for you in the morning", "is coffee good for you in the morning").ok
    verdict = guard.verify_rules("Is Java good for beginners?", "Is coffee good for beginners?")
    assert not verdict.ok and verdict.reason == "terms", verdict


def test_build_reads_crlf_wordnet_files_into_ranked_senses(tmp_path):
    """The builder on a three-synset WordNet in the database's own format (CRLF, licence header)."""
    header = "  1 This software and database is being provided to you\r\n"
    (tmp_path / "data.noun").write_bytes((
        header
        + "00000001 05 n 02 Earth 0 world 3 001 + 00000009 v 0101 | the planet\r\n"
        + "00000002 05 n 01 world 0 000 | everything that exists\r\n"
    ).encode("latin-1"))
    (tmp_path / "data.verb").write_bytes((header + "00000009 30 v 01 earthify 0 000 | made up\r\n").encode())
    for name in ("adj", "adv"):
        (tmp_path / f"data.{name}").write_bytes(header.encode())
        (tmp_path / f"index.{name}").write_bytes(header.encode())
    (tmp_path / "index.noun").write_bytes((
        header
        + "earth n 1 1 + 1 0 00000001\r\n"
        + "world n 2 0 2 0 00000002 00000001\r\n"
    ).encode())
    (tmp_path / "index.verb").write_bytes((header + "earthify v 1 0 1 0 00000009\r\n").encode())
    for name in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"{name}.exc").write_bytes(b"worlds world\r\n" if name == "noun" else b"")
    table = build_synonyms.build(tmp_path, max_rank=8)
    ids = {name: dict(zip(flat[::2], flat[1::2])) for name, flat in table["lemmas"].items()}
    planet = next(i for i in ids["earth"] if i in ids["world"])
    # code = 2 × sense rank + 1 for a name sense: the planet is earth's first sense, written "Earth"
    assert ids["earth"][planet] == 1 and ids["world"][planet] == 2
    assert len(ids["earth"]) == 2  # its own sense plus the derivation link to the verb
    assert table["exceptions"] == {"worlds": ["world"]}

    path = tmp_path / "synonyms.json.gz"
    path.write_bytes(gzip.compress(json.dumps(table).encode()))
    small = synonyms.SynonymTable(path)
    assert small.synonymous("earth", "worlds", a_name=True) and small.synonymous("earthify", "earth")
    assert not small.synonymous("world", "earth", a_name=True)  # "World" has no name sense here


@pytest.mark.parametrize(("query", "cached"), [
    ("biggest desert", "What is the largest desert in the world?"),
    ("Which mountain is the highest on Earth?", "What is the highest mountain in the world?"),
    ("What is the most spoken language globally?", "What's the most spoken language in the world?"),
])
def test_a_superlative_is_about_the_world_unless_it_says_otherwise(query, cached):
    assert guard.verify_rules(query, cached).ok, guard.verify_rules(query, cached)


@pytest.mark.parametrize(("query", "cached"), [
    ("What is the largest desert in Africa?", "What is the largest desert in the world?"),
    ("What is the largest lake in the country?", "What is the largest lake in the world?"),
    ("What is the largest volcano on Mars?", "What is the largest volcano on Earth?"),
])
def test_the_world_scope_is_not_swapped_for_another(query, cached):
    assert not guard.verify_rules(query, cached).ok


def test_two_names_must_share_their_first_senses():
    # WordNet's synset for Taiwan ("Republic of China") is the island's first sense but a later sense
    # of "China": as names they are not synonyms, though the synset would license it for lower-case words
    assert synonyms.synonymous("taiwan", "china")
    assert not synonyms.synonymous("Taiwan", "China", a_name=True, b_name=True)
    assert synonyms.synonymous("earth", "world", a_name=True)  # one name: the ordinary rule
