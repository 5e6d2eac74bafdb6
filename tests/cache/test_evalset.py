"""The hand-written groups: evaluation splits (dev, heldout) and the train split the verifier is fitted on."""

from __future__ import annotations

from cache.evalset import ADVERSARIAL, HELD_OUT, SPLITS, TRAINING_PROBES, Group, load_groups, repeated_questions, split_paths

KINDS = {"entity", "number", "negation", "unit", "direction", "time", "language", "attribute"}


def test_train_split_is_well_formed_and_apart_from_the_evaluation_files():
    paths = split_paths("train")
    assert len(paths) >= 10 and not set(paths) & set(SPLITS.values())
    groups = load_groups("train")
    assert len(groups) >= 2000
    for g in groups:
        assert len(g.paraphrases) >= 3 and len(g.near_misses) >= 3, g.query
        assert {kind for kind, _ in g.near_misses} <= KINDS, g.query
    questions = [g.query.lower() for g in groups]
    assert len(set(questions)) == len(questions)


def test_a_training_group_that_restates_an_evaluation_question_is_found(encoder):
    evaluation = [Group("dev", "What is the capital of Australia?", ["Which city is Australia's capital?"])]
    train = [Group("train", "How do I bake sourdough bread?", ["sourdough bread recipe"]),
             Group("train", "Tell me the capital city of Australia.", ["australia capital?"]),
             Group("train", "What is the capital of Austria?", ["Which city is Austria's capital?"])]
    texts = [t for g in [*evaluation, *train] for t in [g.query, *g.paraphrases]]
    vectors = dict(zip(texts, encoder.embed_many(texts)))
    assert repeated_questions(train, evaluation, vectors, max_cosine=0.8) == [1]


def test_every_evaluation_split_is_well_formed():
    """Each evaluation group has paraphrases and near-misses, and no text is labelled both ways."""
    for split in SPLITS:
        groups = load_groups(split)
        assert len(groups) >= 50, split
        for g in groups:
            assert len(g.paraphrases) >= 2 and len(g.near_misses) >= 2, (split, g.query)
            assert not set(g.paraphrases) & {text for _, text in g.near_misses}, (split, g.query)


def test_the_verifier_never_trains_on_what_measures_it():
    """Every probe is either training data for the learned verifier or held out, never both; dev (which
    chooses its cuts) and the held-out splits are never trained on, and the shipped model says so."""
    from cache import verifier_model as vm

    probes = {s for s in SPLITS if s.startswith("probe_")}
    assert set(TRAINING_PROBES) | (set(HELD_OUT) & probes) == probes
    assert not set(TRAINING_PROBES) & set(HELD_OUT) and "dev" not in TRAINING_PROBES
    assert set(ADVERSARIAL) <= set(TRAINING_PROBES) and set(HELD_OUT) <= set(SPLITS)
    trained_on = vm.VerifierModel.load().spec["meta"]["trained_on"]
    assert not set(trained_on) & {"dev", *HELD_OUT} and set(TRAINING_PROBES) <= set(trained_on)
