"""The shipped ONNX classifier: its contract, its export, and its accuracy on the held-out split."""

from __future__ import annotations

import hashlib
import typing

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from classifiers import metrics
from classifiers.export import head_to_onnx
from classifiers.runtime import MODEL_PATH
from classifiers.train import DATA_PATH
from policies.schema import TaskClass

ACCURACY_BAR = 0.90  # the target for held-out macro accuracy


def test_labels_are_the_policy_schema_classes(classifier):
    # Routing rules are validated against TaskClass: a class the model emits must be one a rule can name.
    assert set(classifier.labels) == set(typing.get_args(TaskClass))


def test_model_is_small_and_self_describing(classifier):
    assert MODEL_PATH.stat().st_size < 1024 * 1024
    assert classifier.dim == 384
    assert classifier.meta["embedding_model"].endswith("all-MiniLM-L6-v2")
    assert 0 < classifier.temperature < 10


def test_model_was_trained_on_the_committed_data(classifier):
    # Regenerate the data and the model doesn't match any more: retrain (python -m classifiers.train).
    assert classifier.meta["data_sha256"] == hashlib.sha256(DATA_PATH.read_bytes()).hexdigest()


def test_heldout_macro_accuracy_meets_the_bar(classifier, heldout, heldout_embeddings):
    y = np.array([classifier.labels.index(r["label"]) for r in heldout])
    pred = classifier.probabilities(heldout_embeddings).argmax(axis=1)
    m = metrics.confusion(y, pred, len(classifier.labels))
    assert metrics.macro_accuracy(m) >= ACCURACY_BAR, metrics.format_report(m, classifier.labels)
    assert metrics.per_class(m)[1].min() >= 0.8  # no class is given up for the average


def test_confidence_is_calibrated_on_heldout(classifier, heldout, heldout_embeddings):
    y = np.array([classifier.labels.index(r["label"]) for r in heldout])
    assert metrics.ece(classifier.probabilities(heldout_embeddings), y) < 0.06


def test_classify_returns_the_argmax_with_its_probability(classifier, heldout_embeddings):
    for vector in heldout_embeddings[:20]:
        c = classifier.classify(vector)
        assert c.label == max(c.probs, key=c.probs.get)
        assert c.confidence == c.probs[c.label]
        assert sum(c.probs.values()) == pytest.approx(1.0, abs=1e-5)


def test_batch_equals_one_at_a_time(classifier, heldout_embeddings):
    batch = classifier.classify_batch(heldout_embeddings[:16])
    assert [c.label for c in batch] == [classifier.classify(v).label for v in heldout_embeddings[:16]]


def test_known_boundary_prompts(classifier, encoder):
    from classifiers.embed import embed

    cases = {
        "what's your return policy?": "simple",
        "Draft a launch email for our new standing desk, aimed at remote workers.": "complex",
        "is it len(x) or x.len() in python?": "code",
        "Sam buys 3 notebooks at $4 each and pays with a $20 bill. How much change does he get?": "math",
    }
    vectors = embed(encoder, list(cases))
    assert [classifier.classify(v).label for v in vectors] == list(cases.values())


@pytest.mark.parametrize("shape", [(383,), (2, 100), (1, 2, 384)])
def test_wrong_shape_is_refused(classifier, shape):
    with pytest.raises(ValueError, match="384"):
        classifier.probabilities(np.zeros(shape, np.float32))


def test_session_is_single_threaded(classifier):
    # A 1×384 product gains nothing from threads; they would only contend with the gateway.
    assert classifier._session.get_session_options().intra_op_num_threads == 1
    assert classifier.providers[-1] == "CPUExecutionProvider"


@settings(max_examples=25, deadline=None)
@given(
    w0=arrays(np.float32, (6, 5), elements=st.floats(-2, 2, width=32)),
    b0=arrays(np.float32, (5,), elements=st.floats(-1, 1, width=32)),
    w1=arrays(np.float32, (5, 3), elements=st.floats(-2, 2, width=32)),
    b1=arrays(np.float32, (3,), elements=st.floats(-1, 1, width=32)),
    x=arrays(np.float32, (4, 6), elements=st.floats(-1, 1, width=32)),
    t=st.floats(0.2, 5.0),
)
def test_exported_graph_is_the_head_with_temperature(w0, b0, w1, b1, x, t):
    model = head_to_onnx([(w0, b0), (w1, b1)], t, ["a", "b", "c"])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"embedding": x})[0]
    z = (np.maximum(x @ w0 + b0, 0) @ w1 + b1) / t
    want = np.exp(z - z.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_cli_prints_the_decision(capsys):
    from classifiers.cli import main

    assert main(["classify", "--json", "write a regex that matches UK postcodes"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["label"] == "code"
    assert set(out["probs"]) == {"simple", "complex", "code", "math"}
