"""The learned second stage of the near-miss guard (cache/verifier_model.py, cache/train_verifier.py)."""

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
# Paraphrases the rules refuse (a reworded content word) and the model serves (dev pairs; the model
# trained with the WordNet-aware rules is calibrated to p >= 0.88 and overturns few refusals).
MODEL_SERVES = [
    ("How many players does a football side have on the pitch?", "How many players are on a soccer team on the field?"),
    ("Who wrote the Harry Potter books?", "Who is the author of Harry Potter?"),
    ("Which ingredient is guacamole based on?", "What is the main ingredient in guacamole?"),
    ("Can you suggest a book that teaches statistics well?", "Recommend a good book for learning statistics."),
]


def test_model_file_loads_and_matches_the_features():
    model = vm.VerifierModel.load()
    assert model.spec["features"] == vm.FEATURES
    assert 0.5 <= model.threshold < 1.0 and model.trees
    assert vm.shared_model() is not None
    x = vm.pair_features(*MODEL_SERVES[0])
    assert x.shape == (len(vm.FEATURES),) and np.isfinite(x).all()
    assert 0.0 <= model.probability(x) <= 1.0


@pytest.mark.parametrize(("query", "cached"), MODEL_REFUSES)
def test_known_near_misses_are_refused(query, cached):
    rules = guard.verify_rules(query, cached)
    assert not rules.ok and rules.reason in guard.SECOND_CHANCE, rules  # the pair does reach the model
    for q, c in ((query, cached), (cached, query)):
        verdict = guard.verify(q, c)
        assert not verdict.ok and verdict.reason in guard.SECOND_CHANCE, verdict
        assert "model p=" in verdict.detail


@pytest.mark.parametrize(("query", "cached"), MODEL_SERVES)
def test_clear_paraphrases_are_served_by_the_model(query, cached):
    assert not guard.verify_rules(query, cached).ok
    verdict = guard.verify(query, cached)
    assert verdict.ok and verdict.detail.startswith("model p="), verdict


def test_hard_vetoes_never_reach_the_model():
    for query, cached, reason in [
        ("Convert 12 miles to kilometers.", "Convert 10 miles to kilometers.", "numbers"),
        ("Why is it not safe to eat raw cookie dough?", "Is it safe to eat raw cookie dough?", "negation"),
        ("What is the smallest ocean on Earth?", "What is the largest ocean on Earth?", "poles"),
        ("Convert 10 kilometers to miles.", "Convert 10 miles to kilometers.", "direction"),
        ("What is the capital of France?", "Quelle est la capitale de la France ?", "language"),
    ]:
        verdict = guard.verify(query, cached)
        assert not verdict.ok and verdict.reason == reason and "model" not in (verdict.detail or ""), verdict


def test_without_a_model_the_rules_decide(monkeypatch):
    monkeypatch.setattr(vm, "shared_model", lambda: None)
    query, cached = MODEL_SERVES[0]
    assert guard.verify(query, cached) == guard.verify_rules(query, cached)


def test_exported_trees_equal_sklearn(tmp_path):
    from sklearn.ensemble import GradientBoostingClassifier

    from cache.train_verifier import export

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, len(vm.FEATURES)))
    y = (x[:, 0] + 0.5 * x[:, 3] > 0).astype(int)
    sk = GradientBoostingClassifier(n_estimators=12, max_depth=3, random_state=0).fit(x, y)
    spec = json.loads(json.dumps(export(sk, 0.8, {})))  # through JSON, as shipped
    model = vm.VerifierModel(spec)
    assert np.allclose([model.log_odds(row) for row in x[:40]], sk.decision_function(x[:40]), atol=1e-9)


def test_training_script_reproduces_on_a_tiny_run(tmp_path, encoder):
    """Two tiny runs with one seed give the same model (the committed one comes from the full run)."""
    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        result = subprocess.run(
            [sys.executable, "-m", "cache.train_verifier", "--limit-groups", "30", "--folds", "2",
             "--n-estimators", "8", "--seed", "0", "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]
        assert "chosen p >=" in result.stdout
        outs.append(json.loads(out.read_text()))
    assert outs[0]["trees"] == outs[1]["trees"] and outs[0]["threshold"] == outs[1]["threshold"]
    assert vm.VerifierModel(outs[0]).trees
