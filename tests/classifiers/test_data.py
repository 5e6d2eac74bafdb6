"""The labelled data: big enough, varied, and split so held-out prompts share nothing with training."""

from __future__ import annotations

from collections import Counter

from classifiers.data import generate
from classifiers.data.vocab import V

LABELS = {"simple", "complex", "code", "math"}


def test_size_and_balance(records):
    assert len(records) >= 2000
    counts = Counter(r["label"] for r in records)
    assert set(counts) == LABELS
    assert min(counts.values()) >= 0.2 * len(records) - 60  # no class starved


def test_every_kind_of_prompt_is_present_in_both_splits(records):
    for split in ("train", "heldout"):
        kinds = Counter((r["label"], r["kind"]) for r in records if r["split"] == split)
        for label in LABELS:
            for kind in ("template", "literal", "foreign", "conversation"):
                assert kinds[label, kind] > 0, (split, label, kind)


def test_conversations_carry_their_messages(records):
    conv = [r for r in records if r["kind"] == "conversation"]
    assert conv and all(len(r["messages"]) >= 2 for r in conv)
    assert all(r["messages"][-1]["role"] == "user" for r in conv)


def test_heldout_share_is_about_a_fifth(records):
    share = sum(r["split"] == "heldout" for r in records) / len(records)
    assert 0.15 <= share <= 0.25


def test_groups_and_texts_never_cross_splits(records):
    split_of: dict[str, str] = {}
    for r in records:
        assert split_of.setdefault(r["group"], r["split"]) == r["split"], r["group"]
    normalise = lambda t: " ".join(t.lower().split())  # noqa: E731
    train = {normalise(r["text"]) for r in records if r["split"] == "train"}
    assert not [r["text"] for r in records if r["split"] == "heldout" and normalise(r["text"]) in train]


def test_heldout_templates_use_only_heldout_fillers():
    fillers = generate.split_fillers(seed=6)
    for name, items in V.items():
        if len(items) >= generate.MIN_SPLIT_LIST:
            assert fillers[name]["heldout"] and fillers[name]["train"]
            assert not set(fillers[name]["heldout"]) & set(fillers[name]["train"]), name


def test_committed_file_is_what_the_generator_writes(records):
    assert generate.build(seed=6) == records


def test_noise_changes_surface_not_meaning():
    import random
    import re

    rng = random.Random(1)
    text = "Could you explain how I reverse a list in Python without a library?"
    words = lambda t: set(re.findall(r"[a-z]+", t.lower()))  # noqa: E731
    variants = {generate.noisy(text, rng) for _ in range(100)}
    assert len(variants) > 20
    # At most two typos per prompt: every other word survives.
    assert all(len(words(text) - words(v)) <= 2 for v in variants)
