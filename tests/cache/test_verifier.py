"""The learned stage of the near-miss guard (cache/verifier_model.py, cache/train_verifier.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cache import guard, verifier_model as vm

ROOT = Path(__file__).resolve().parents[2]

# Refused by the rules for unmatched words only, and the model must not overturn that.
MODEL_REFUSES = [
    ("What is the capital of Austria?", "What is the capital of Australia?"),
    ("How do I reverse a list in Java?", "How do I reverse a list in Python?"),
    ("What is the boiling point of ethanol in Fahrenheit?", "What is the boiling point of water in Fahrenheit?"),
    ("Who wrote War and Peace?", "Who wrote Pride and Prejudice?"),
    ("How many grams are in a pound?", "How many ounces are in a pound?"),
    ("How do I declare a constant in C#?", "How do I declare a constant in C++?"),
    ("Can cats eat grapes?", "Can dogs eat grapes?"),
    ("How do I take a screenshot on Windows?", "How do I take a screenshot on a Mac?"),
]
# Paraphrases the rules refuse for a reworded content word (dev pairs): what a model with a reachable
# accept cut serves (the shipped cut is chosen by cache/train_verifier.py and may serve none).
REWORDED = [
    ("How many players does a football side have on the pitch?", "How many players are on a soccer team on the field?"),
    ("How many protons does a carbon atom have?", "What is the atomic number of carbon?"),
]
# Passed by the rules (no unmatched term) but another question: the model refuses them. Not from any
# split (written for this test). ("What is the main idea of Walden?" / "When was Walden written?" stood here
# until stop 32, when the rules learnt to read it.)
MODEL_VETOES = [
    # the same words, the other way: onto / off, hide / show
    ("How do I copy files onto a USB stick?", "How do I copy files off a USB stick?"),
    ("How do I make folders hidden in Windows?", "How do I show hidden folders in Windows?"),
    # the same words with the roles swapped: who bites whom
    ("How should I react when another child bites my son?", "How should I react when my son bites other children?"),
]


def test_model_file_loads_and_matches_the_features():
    model = vm.VerifierModel.load()
    assert model.spec["features"] == vm.FEATURES
    assert 0.0 <= model.veto_cut <= model.threshold <= 1.01
    assert vm.shared_model() is not None
    x = model.features(*REWORDED[0])
    assert x.shape == (len(vm.FEATURES),) and np.isfinite(x).all()
    assert 0.0 <= model.probability(x) <= 1.0


@pytest.mark.parametrize(("query", "cached"), MODEL_REFUSES)
def test_known_near_misses_are_refused(query, cached):
    rules = guard.verify_rules(query, cached)
    assert not rules.ok and rules.reason in guard.SECOND_CHANCE, rules  # the pair does reach the model
    model = vm.shared_model()
    for q, c in ((query, cached), (cached, query)):
        verdict = guard.verify(q, c)
        assert not verdict.ok and verdict.reason in guard.SECOND_CHANCE, verdict
        assert model.threshold > 1.0 or model.prob(q, c) < model.threshold


@pytest.mark.parametrize(("query", "cached"), REWORDED)
def test_the_accept_cut_decides_reworded_pairs(query, cached, monkeypatch):
    model = vm.shared_model()
    rules = guard.verify_rules(query, cached)
    assert not rules.ok and rules.reason in guard.SECOND_CHANCE
    p = model.prob(query, cached)
    monkeypatch.setattr(model, "threshold", p)
    verdict = guard.verify(query, cached)
    assert verdict.ok and verdict.detail.startswith(f"model p={p:.3f}"), verdict
    monkeypatch.setattr(model, "threshold", p + 1e-9)
    verdict = guard.verify(query, cached)
    assert not verdict.ok and verdict.reason == rules.reason, verdict


@pytest.mark.parametrize(("query", "cached"), MODEL_VETOES)
def test_the_model_refuses_other_questions_the_rules_pass(query, cached):
    assert guard.verify_rules(query, cached).ok  # the rules see the same terms
    verdict = guard.verify(query, cached)
    assert not verdict.ok and verdict.reason == "model" and "rules pass" in verdict.detail, verdict


def test_hard_vetoes_never_reach_the_model():
    for query, cached, reason in [
        ("Convert 12 miles to kilometers.", "Convert 10 miles to kilometers.", "numbers"),
        ("Why is it not safe to eat raw cookie dough?", "Is it safe to eat raw cookie dough?", "negation"),
        ("What is the smallest ocean on Earth?", "What is the largest ocean on Earth?", "poles"),
        ("Convert 10 kilometers to miles.", "Convert 10 miles to kilometers.", "direction"),
        ("What is the capital of France?", "Quelle est la capitale de la France ?", "language"),
        ("How do I calculate EBITDA?", "What is EBITDA?", "intent"),
        ("Write a poem about photosynthesis.", "Explain photosynthesis.", "form"),
        ("What do koalas eat?", "What eats koalas?", "direction"),
    ]:
        verdict = guard.verify(query, cached)
        assert not verdict.ok and verdict.reason == reason and "model" not in (verdict.detail or ""), verdict


def test_without_a_model_the_rules_decide(monkeypatch):
    monkeypatch.setattr(vm, "shared_model", lambda: None)
    for query, cached in [*REWORDED, *MODEL_VETOES]:
        assert guard.verify(query, cached) == guard.verify_rules(query, cached)


def _walk(spec: dict, x: np.ndarray) -> float:
    """The trees scored the plain way, one node at a time, leaf values summed in tree order."""
    values = []
    for tree in spec["trees"]:
        node = 0
        while not tree["leaf"][node]:
            node = tree["left"][node] if x[tree["feature"][node]] <= tree["threshold"][node] else tree["right"][node]
        values.append(tree["value"][node])
    return spec["baseline"] + float(np.sum(np.asarray(values, dtype=np.float64)))


def test_bit_masks_score_the_shipped_trees_as_a_walk_does():
    """QuickScorer's masks pick each tree's exit leaf as the walk does, rows sitting exactly on splits too."""
    model = vm.shared_model()
    rows = [model.features(q, c) for q, c in [*REWORDED, *MODEL_VETOES]]
    rng = np.random.default_rng(7)
    for row in list(rows):
        on_splits = row.copy()
        for j in rng.integers(0, len(model.split), 60):
            on_splits[model.feature[j]] = model.split[j]  # x == threshold goes left
        rows += [on_splits, on_splits + 1e-9, rng.normal(size=len(row)) * 3]
    walked = [_walk(model.spec, row) for row in rows]
    assert [model.log_odds(row) for row in rows] == walked
    assert len({round(w, 6) for w in walked}) > len(rows) // 2  # the rows reach many different leaves


def test_exported_trees_equal_sklearn():
    from sklearn.ensemble import HistGradientBoostingClassifier

    from cache.train_verifier import export

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(vm.FEATURES)))
    y = (x[:, 0] + 0.5 * x[:, 3] - x[:, 70] > 0).astype(int)
    sk = HistGradientBoostingClassifier(max_iter=12, random_state=0).fit(x, y)
    axes = {"mean": [0.0] * 384, "components": np.eye(vm.WORD_AXES, 384).tolist()}
    swaps = {"mean": [0.0] * 384, "components": np.eye(vm.SWAP_AXES, 384).tolist()}
    spec = json.loads(json.dumps(export(sk, {"words": axes, "swaps": swaps}, 0.2, 0.8, {})))  # through JSON
    model = vm.VerifierModel(spec)
    assert np.allclose([model.log_odds(row) for row in x[:60]], sk.decision_function(x[:60]), atol=1e-9)
    assert (model.veto_cut, model.threshold) == (0.2, 0.8)


def test_projection_puts_each_side_on_its_axes():
    rng = np.random.default_rng(1)
    raw = rng.normal(size=(2, 4 * 384))
    words = {"mean": rng.normal(size=384).tolist(), "components": rng.normal(size=(vm.WORD_AXES, 384)).tolist()}
    swaps = {"mean": rng.normal(size=384).tolist(), "components": rng.normal(size=(vm.SWAP_AXES, 384)).tolist()}
    out = vm.project(raw, words, swaps)
    assert out.shape == (2, 2 * vm.WORD_AXES + 2 * vm.SWAP_AXES)
    w = np.array(words["components"])
    assert np.allclose(out[1, vm.WORD_AXES:2 * vm.WORD_AXES], (raw[1, 384:768] - words["mean"]) @ w.T)


def test_training_script_reproduces_on_a_tiny_run(tmp_path, encoder):
    """Two tiny runs with one seed write the same bytes (the committed model comes from the full run)."""
    outs = []
    for name in ("a.json.gz", "b.json.gz"):
        out = tmp_path / name
        result = subprocess.run(
            [sys.executable, "-m", "cache.train_verifier", "--limit-groups", "80", "--iterations", "8",
             "--seed", "0", "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]
        assert "chosen veto p <" in result.stdout and "exported trees reproduce scikit-learn" in result.stdout
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert vm.VerifierModel.load(tmp_path / "a.json.gz").values.size
