"""The sentence encoder: all-MiniLM-L6-v2 → 384-d L2-normalised float32 vectors.

Two interchangeable runtimes compute the same vectors:
- `OnnxRuntimeEncoder` (preferred): the graph exported by `cache.onnx_export` on onnxruntime, CUDA
  provider when present. ~3x faster than torch for one sentence on 2 CPU threads. On the CPU it runs
  the int8 variant by default (`SWITCHYARD_ENCODER_PRECISION=int8|fp32`): the fused attention and
  four of the six FFNs dynamically quantised (`onnx_export.INT8_RECIPE`), ~25% less time per sentence
  than the fused fp32 graph here, cosine vs fp32 0.9946 min / 0.9972 mean on held-out sentences; it is used only while it agrees with
  the fp32 graph (cosine ≥ MIN_INT8_AGREEMENT on the check sentences), which itself must agree with
  torch (≥ 0.999). The int8 graph encodes one sentence per run, so a vector never depends on its batch.
- `TorchEncoder` (fallback): sentence-transformers on torch, used when the export or onnxruntime fails,
  or when the exported graph disagrees with torch (cosine < 0.999).

`Encoder` wraps a runtime with a micro-batcher: `await encoder.embed(text)` on the request path,
`encoder.embed_many(texts)` for offline work (benchmarks, import, rebuilds). The only request in flight
encodes on a session whose worker threads spin (`embed(text, alone=True)`; docs/cache.md, "The
encoder").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import structlog

from cache import onnx_export
from cache.batcher import MicroBatcher

DIM = 384
MIN_AGREEMENT = 0.999  # below this cosine the ONNX graph is not trusted and torch is used
MIN_INT8_AGREEMENT = 0.98  # below this cosine (int8 vs fp32 graph, any check sentence) int8 is not used
PRECISIONS = ("int8", "fp32")
_CHECK_SENTENCES = [
    "What is the capital of Australia?",
    "how do i reverse a linked list in python without recursion",
    "Convert 10 miles to kilometres.",
    "Ist das Wetter morgen in Berlin gut?",
    "ok",
]

log = structlog.get_logger("switchyard.cache.encoder")


def default_threads() -> int:
    env = os.environ.get("SWITCHYARD_ENCODER_THREADS")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


def default_precision() -> str:
    value = os.environ.get("SWITCHYARD_ENCODER_PRECISION", "int8").strip().lower()
    if value not in PRECISIONS:
        raise ValueError(f"SWITCHYARD_ENCODER_PRECISION must be one of {PRECISIONS}, not {value!r}")
    return value


class OnnxRuntimeEncoder:
    name = "onnxruntime"

    def __init__(self, path: Path, model: Path | None = None, threads: int | None = None,
                 precision: str = "fp32") -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = model or onnx_export.model_dir()
        self.tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
        self.tokenizer.enable_truncation(onnx_export.MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch
        threads = threads or default_threads()
        available = ort.get_available_providers()
        providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]
        self.session = _session(path, threads, providers, spinning=False)
        # For a caller with the machine to itself (`Encoder.embed(alone=True)`), a second session of
        # the same graph whose worker threads spin while it runs. Asleep, every parallel step of a run
        # wakes the other thread: on a 2-core VM two sleeping threads were no faster than one (3.9 vs
        # 3.8 ms p50), spinning ones 3.0 (docs/cache.md, "The encoder"). Spinning where other work needs
        # the cores (the batcher's thread, the event loop busy) is what made it slower before, so the
        # batched path keeps the sleeping threads.
        cpu_only = "CUDAExecutionProvider" not in providers
        self.alone_session = _session(path, threads, providers, spinning=True) if cpu_only and threads > 1 else None
        self.providers = self.session.get_providers()
        self.precision = precision
        self.path = path

    def encode(self, texts: Sequence[str], *, session=None) -> np.ndarray:
        """`session`: which of this runtime's sessions runs them (default: the batched path's)."""
        if not texts:
            return np.zeros((0, DIM), np.float32)
        if self.precision == "int8" and len(texts) > 1:
            # Dynamic int8 quantisation scales activations per tensor, so in a padded batch a short
            # sentence would be quantised on the scale of its longest neighbour (cosine 0.979 for "ok"
            # beside a paragraph). One sentence per run keeps every vector independent of its batch;
            # batching bought little here anyway (8 short sentences: 45 ms batched fp32, 48 ms int8
            # one by one).
            return np.concatenate([self._run([text], session) for text in texts])
        return self._run(texts, session)

    def encode_alone(self, texts: Sequence[str]) -> np.ndarray:
        """`encode` on the spinning session (the same vectors), for a caller nothing else waits on."""
        return self.encode(texts, session=self.alone_session)

    def _run(self, texts: Sequence[str], session=None) -> np.ndarray:
        batch = self.tokenizer.encode_batch(list(texts))
        feeds = {
            "input_ids": np.asarray([e.ids for e in batch], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in batch], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in batch], dtype=np.int64),
        }
        return np.ascontiguousarray((session or self.session).run(None, feeds)[0], dtype=np.float32)


class TorchEncoder:
    name = "torch"

    def __init__(self, model: Path | None = None, threads: int | None = None) -> None:
        import torch

        if threads:
            torch.set_num_threads(threads)
        self.model = onnx_export.load_sentence_transformer(model)
        self.model.max_seq_length = onnx_export.MAX_TOKENS
        self.providers = ["torch-cpu"]
        self.precision = "fp32"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), np.float32)
        vectors = self.model.encode(list(texts), batch_size=64, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _session(path: Path, threads: int, providers: list[str], *, spinning: bool):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning worker threads steal the CPU the event loop needs; on a shared 2-core box a spinning
    # 2-thread session run from the batcher's thread measured 19 ms/sentence against 10 ms without.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    return ort.InferenceSession(str(path), options, providers=providers)


_export_lock = threading.Lock()


def load_runtime(prefer: str = "onnx", threads: int | None = None,
                 precision: str | None = None) -> OnnxRuntimeEncoder | TorchEncoder:
    """The fastest runtime that works here. Exports the ONNX file on first use and checks it against
    torch before trusting it; any failure falls back to torch with a log line saying why. With
    precision "int8" (the default on the CPU) the int8 variant is derived from the fp32 file at first
    use and checked against it; if that fails the fp32 graph is used."""
    precision = precision or default_precision()
    if prefer == "onnx":
        try:
            with _export_lock:
                path = onnx_export.onnx_path()
                fresh = not path.exists()
                if fresh:
                    log.info("encoder.onnx_export", path=str(path))
                    onnx_export.export(path)
                runtime = OnnxRuntimeEncoder(path, threads=threads)
                if fresh:
                    reference = TorchEncoder().encode(_CHECK_SENTENCES)
                    agree = onnx_export.agreement(runtime.encode(_CHECK_SENTENCES), reference)
                    if agree < MIN_AGREEMENT:
                        path.unlink(missing_ok=True)
                        raise RuntimeError(f"ONNX export disagrees with torch (min cosine {agree:.5f})")
                if precision == "int8" and "CUDAExecutionProvider" not in runtime.providers:
                    runtime = _int8_runtime(runtime, threads) or runtime
            return runtime
        except Exception as exc:  # noqa: BLE001 - any failure here means: use torch
            log.warning("encoder.onnx_unavailable", error=repr(exc))
    return TorchEncoder(threads=threads)


def _int8_runtime(fp32: OnnxRuntimeEncoder, threads: int | None) -> OnnxRuntimeEncoder | None:
    """The int8 variant of `fp32`'s graph (quantised on first use), or None when it cannot be made or
    disagrees with the fp32 graph."""
    path = onnx_export.int8_path(fp32.path)
    try:
        fresh = not path.exists()
        if fresh:
            log.info("encoder.onnx_quantize", path=str(path))
            onnx_export.quantize(fp32.path, path)
        runtime = OnnxRuntimeEncoder(path, threads=threads, precision="int8")
        if fresh:
            agree = min(onnx_export.agreement(runtime.encode([text]), fp32.encode([text])) for text in _CHECK_SENTENCES)
            if agree < MIN_INT8_AGREEMENT:
                path.unlink(missing_ok=True)
                raise RuntimeError(f"int8 graph disagrees with fp32 (min cosine {agree:.5f})")
        return runtime
    except Exception as exc:  # noqa: BLE001 - any failure here means: stay on fp32
        log.warning("encoder.int8_unavailable", error=repr(exc))
        return None


class Encoder:
    """One per process; shared by the cache, the classifier and anything else that needs the vector."""

    dim = DIM

    def __init__(self, runtime: OnnxRuntimeEncoder | TorchEncoder, *, max_batch: int = 32,
                 max_wait_ms: float = 2.0) -> None:
        self.runtime = runtime
        self._batcher = MicroBatcher(runtime.encode, max_batch=max_batch, max_wait_s=max_wait_ms / 1000)

    @classmethod
    def load(cls, prefer: str = "onnx", threads: int | None = None, precision: str | None = None,
             **batching) -> Encoder:
        return cls(load_runtime(prefer, threads, precision), **batching)

    @property
    def backend(self) -> str:
        return self.runtime.name

    @property
    def batcher(self) -> MicroBatcher:
        return self._batcher

    async def embed(self, text: str, *, alone: bool = False) -> np.ndarray:
        """(384,) float32, L2-normalised. Concurrent calls are batched into one model call.

        `alone`: the caller is the only request in flight (the gateway says so), so no other work needs
        the cores while the model runs. If the batcher is idle too, the text runs on the runtime's
        `encode_alone`, whose worker threads spin (`OnnxRuntimeEncoder`), still on the batcher's thread:
        the event loop is never blocked."""
        if alone and self._batcher.idle:
            return await self._batcher.run_alone(text, getattr(self.runtime, "encode_alone", self.runtime.encode))
        return await self._batcher.submit(text)

    def embed_many(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Synchronous, for offline use (never call it on the event loop)."""
        out = np.zeros((len(texts), DIM), np.float32)
        for start in range(0, len(texts), batch_size):
            out[start:start + batch_size] = self.runtime.encode(texts[start:start + batch_size])
        return out

    async def aclose(self) -> None:
        await self._batcher.aclose()
