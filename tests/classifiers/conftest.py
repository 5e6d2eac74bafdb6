from __future__ import annotations

import numpy as np
import pytest

from classifiers.embed import embed, load_encoder
from classifiers.runtime import PromptClassifier
from classifiers.train import load_records


@pytest.fixture(scope="session")
def records() -> list[dict]:
    return load_records()


@pytest.fixture(scope="session")
def heldout(records) -> list[dict]:
    return [r for r in records if r["split"] == "heldout"]


@pytest.fixture(scope="session")
def encoder():
    """The real all-MiniLM-L6-v2 from the bundled package."""
    return load_encoder()


@pytest.fixture(scope="session")
def heldout_embeddings(encoder, heldout) -> np.ndarray:
    return embed(encoder, [r["text"] for r in heldout])


@pytest.fixture(scope="session")
def classifier() -> PromptClassifier:
    return PromptClassifier()
