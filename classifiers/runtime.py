"""Run the prompt classifier over a request's shared embedding.

    clf = PromptClassifier()            # loads classifiers/model/prompt_classifier.onnx once
    c = clf.classify(ctx.embedding)     # ~tens of µs on one CPU thread: fine on the event loop
    c.label, c.confidence, c.probs

The model is a small head over all-MiniLM-L6-v2 (384-d, L2-normalised mean pooling); it does not embed
text itself. Probabilities are temperature-calibrated inside the graph, so `confidence` (the top
probability) can be compared with policy thresholds directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

MODEL_DIR = Path(__file__).with_name("model")
MODEL_PATH = MODEL_DIR / "prompt_classifier.onnx"


@dataclass(frozen=True, slots=True)
class Classification:
    label: str
    confidence: float
    probs: dict[str, float]


def default_providers() -> list[str]:
    """CUDA when onnxruntime-gpu is installed and sees a device, else the CPU."""
    available = ort.get_available_providers()
    return [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]


class PromptClassifier:
    def __init__(
        self,
        model_path: str | Path = MODEL_PATH,
        *,
        providers: list[str] | None = None,
        threads: int = 1,
    ) -> None:
        model_path = Path(model_path)
        self.path = model_path
        meta = json.loads(model_path.with_suffix(".json").read_text(encoding="utf-8"))
        self.labels: tuple[str, ...] = tuple(meta["labels"])
        self.dim: int = int(meta["dim"])
        self.temperature: float = float(meta["temperature"])
        self.meta = meta
        opts = ort.SessionOptions()
        # One request is a 1×384 matrix product: threads only add synchronisation cost, and the
        # gateway's cores are better spent on other requests.
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(model_path), opts, providers=providers or default_providers())
        self._input = self._session.get_inputs()[0].name
        self._output = [self._session.get_outputs()[0].name]
        self.providers: list[str] = self._session.get_providers()

    def probabilities(self, embeddings: np.ndarray) -> np.ndarray:
        """[n, dim] (or [dim]) embeddings → [n, classes] calibrated probabilities."""
        x = np.asarray(embeddings, dtype=np.float32)
        if x.ndim == 1:
            x = x[None, :]
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"expected embeddings of shape [n, {self.dim}], got {list(x.shape)}")
        return self._session.run(self._output, {self._input: x})[0]

    def classify(self, embedding: np.ndarray) -> Classification:
        return self._decide(self.probabilities(embedding)[0])

    def classify_batch(self, embeddings: np.ndarray) -> list[Classification]:
        return [self._decide(p) for p in self.probabilities(embeddings)]

    def _decide(self, p: np.ndarray) -> Classification:
        i = int(p.argmax())
        return Classification(self.labels[i], float(p[i]), {name: float(v) for name, v in zip(self.labels, p)})
