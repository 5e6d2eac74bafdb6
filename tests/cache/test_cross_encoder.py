"""The cross-encoder second stage (cache/cross_encoder.py, cache/train_cross_encoder.py).

A tiny model is trained by the real training script on a few dev groups (1 layer, 1 epoch, two folds so
the out-of-fold cut selection runs too); the tests check the delta file, the rebuild from base + delta,
the ONNX export against torch, and how the guard uses the model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cache import cross_encoder as ce
from cache import guard

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [
    ("How do I remove duplicates from a list in Python?", "Getting rid of repeated elements in a Python list — how?"),
    ("What is the capital of Portugal?", "What is the capital of Poland?"),
    ("Convert 5 kilograms to pounds.", "5 kg in lbs"),
    ("a", "a much longer second text, with punctuation and 12 numbers, to pad the batch"),
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ce") / "cross_encoder.safetensors"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "cache.train_cross_encoder", "--limit-groups", "6", "--folds", "2", "--epochs", "1",
         "--layers", "1", "--augment", "1", "--hard-k", "1", "--threshold", "0.65", "--max-false", "1",
         "--max-false-rotated", "1", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "out-of-fold simulation" in result.stdout and "chosen p >=" in result.stdout
    return out


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SWITCHYARD_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_delta_holds_only_what_was_trained(tiny_model):
    from safetensors import safe_open

    meta = ce.read_meta(tiny_model)
    assert meta["layers"] == 1 and 0.0 <= meta["cut"] <= 1.01
    with safe_open(str(tiny_model), "pt") as f:
        keys = list(f.keys())
        dtypes = {str(f.get_tensor(k).dtype) for k in keys}
    assert "head.weight" in keys and "bert.embeddings.token_type_embeddings.weight" in keys
    assert not any("word_embeddings" in k or "position_embeddings" in k for k in keys)
    assert not any("encoder.layer.1." in k for k in keys)  # one kept layer
    assert dtypes == {"torch.float16"}
    assert tiny_model.stat().st_size < 4 * 2**20


def test_rebuild_reproduces_the_saved_weights(tiny_model):
    from safetensors.torch import load_file

    model, _ = ce.load_torch(tiny_model)
    state = model.state_dict()
    for key, tensor in load_file(str(tiny_model)).items():
        assert np.array_equal(state[key].numpy(), tensor.float().numpy()), key
    base = ce.build_torch(1).state_dict()  # the frozen embeddings come from the base package
    assert np.array_equal(state["bert.embeddings.word_embeddings.weight"].numpy(),
                          base["bert.embeddings.word_embeddings.weight"].numpy())


def test_onnx_export_agrees_with_torch(tiny_model, cache_dir):
    verifier = ce.CrossEncoderVerifier(tiny_model, runtime="onnx")
    assert verifier.runtime == "onnxruntime"
    exported = ce.onnx_path(tiny_model)
    assert exported.parent == cache_dir and exported.exists()
    onnx_p = verifier.probs(PAIRS)  # one padded batch
    torch_p = verifier.probs_torch(PAIRS)
    assert np.max(np.abs(onnx_p - torch_p)) < ce.MAX_AGREEMENT_GAP
    single = np.array([verifier.prob(a, b) for a, b in PAIRS])  # unpadded, one by one (the hit path)
    assert np.max(np.abs(single - torch_p)) < ce.MAX_AGREEMENT_GAP
    again = ce.CrossEncoderVerifier(tiny_model, runtime="onnx")  # reuses the exported file
    assert again.runtime == "onnxruntime" and list(cache_dir.glob("cross-encoder-*.onnx")) == [exported]


def test_fingerprint_changes_with_the_delta(tiny_model, tmp_path, cache_dir):
    other = tmp_path / "other.safetensors"
    other.write_bytes(tiny_model.read_bytes() + b" ")
    assert ce.onnx_path(other) != ce.onnx_path(tiny_model)


def test_accepts_uses_the_calibrated_cut(tiny_model, cache_dir):
    verifier = ce.CrossEncoderVerifier(tiny_model, runtime="torch")
    query, cached = PAIRS[0]
    p = verifier.prob(query, cached)
    verifier.threshold = p
    assert verifier.accepts(query, cached) == (True, pytest.approx(p))
    verifier.threshold = p + 1e-6
    assert verifier.accepts(query, cached)[0] is False


def test_guard_gives_the_model_only_the_second_chance(tiny_model, cache_dir, monkeypatch):
    verifier = ce.CrossEncoderVerifier(tiny_model, runtime="torch")
    verifier.threshold = 0.0  # a model that accepts everything it is asked about
    monkeypatch.setattr(guard, "learned_model", lambda: verifier)
    reworded = ("Getting rid of repeated elements in a Python list — how?",
                "How do I remove duplicates from a list in Python?")
    assert guard.verify_rules(*reworded).reason in guard.SECOND_CHANCE
    verdict = guard.verify(*reworded)
    assert verdict.ok and "model p=" in (verdict.detail or "")
    for query, cached, reason in [("Convert 50 kilograms to pounds.", "Convert 5 kilograms to pounds.", "numbers"),
                                  ("Convert 5 pounds to kilograms.", "Convert 5 kilograms to pounds.", "direction"),
                                  ("Is it not safe to eat raw eggs?", "Is it safe to eat raw eggs?", "negation")]:
        verdict = guard.verify(query, cached)
        assert not verdict.ok and verdict.reason == reason  # hard vetoes never reach the model
    verifier.threshold = 1.01  # and one that accepts nothing
    assert not guard.verify(*reworded).ok


def test_guard_falls_back_without_a_cross_encoder(monkeypatch, tmp_path):
    from cache import verifier_model

    monkeypatch.setattr(ce, "MODEL_PATH", tmp_path / "missing.safetensors")
    assert guard.learned_model() is verifier_model.shared_model()
