"""Load a Hugging Face causal LM directory: weights, tokenizer, chat template, context length.

CUDA gets bf16 (fp16 where bf16 is unsupported) with the safetensors weights loaded straight onto
the GPU (`device_map`), the CPU gets fp32. A directory that cannot be loaded raises `ModelLoadError`
naming the directory and what is missing, before any heavy work starts.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

import torch

# When a tokenizer has no chat template, messages are rendered as "role: content" lines followed by
# "assistant:" — a plain transcript any base model can continue. Documented in docs/local-engine.md.
PLAIN_CHAT_FALLBACK = "plain transcript (role: content lines, then 'assistant:')"


class ModelLoadError(RuntimeError):
    """A model directory that cannot be served; the message names the directory and the problem."""


@dataclass(slots=True)
class LoadedModel:
    path: Path
    model: torch.nn.Module
    tokenizer: object
    device: torch.device
    dtype: torch.dtype
    context_length: int
    eos_token_ids: frozenset[int]
    cache_arg: str
    """Name of the forward() keyword that takes the KV cache: "cache" in transformers >= 5.x,
    "past_key_values" before."""
    has_chat_template: bool
    supports_logits_to_keep: bool
    # One lock per model: the worker thread owns forward passes, others (tests, calibration) share it.
    lock: threading.Lock = field(default_factory=threading.Lock)
    runner: object = None
    """The batched forward pass (runner.BatchedGPT2), False where the architecture has none;
    set on first use."""

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    @property
    def num_layers(self) -> int:
        cfg = self.model.config.get_text_config()
        for key in ("num_hidden_layers", "n_layer", "num_layers"):
            if getattr(cfg, key, None):
                return int(getattr(cfg, key))
        return 1


def pick_device(device: str | None = None) -> torch.device:
    if device:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def pick_dtype(device: torch.device) -> torch.dtype:
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32  # fp16 matmuls on CPU are slow and lossy; the shipped fp16 files upcast


def check_model_dir(path: Path) -> None:
    """Fail early and specifically, instead of a deep transformers traceback."""
    if not path.exists():
        raise ModelLoadError(f"model directory {path} does not exist")
    if not path.is_dir():
        raise ModelLoadError(f"model path {path} is not a directory")
    missing = []
    if not (path / "config.json").is_file():
        missing.append("config.json")
    weights = list(path.glob("*.safetensors")) + list(path.glob("*.bin")) + list(path.glob("*.safetensors.index.json"))
    if not weights:
        missing.append("model weights (*.safetensors)")
    if not ((path / "tokenizer.json").is_file() or (path / "tokenizer.model").is_file() or (path / "vocab.json").is_file()):
        missing.append("tokenizer (tokenizer.json, tokenizer.model or vocab.json)")
    if missing:
        raise ModelLoadError(f"model directory {path} is missing: {', '.join(missing)}")
    try:
        json.loads((path / "config.json").read_text())
    except ValueError as e:
        raise ModelLoadError(f"model directory {path}: config.json is not valid JSON ({e})") from e


def _context_length(model, tokenizer) -> int:
    cfg = model.config.get_text_config()
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx"):
        value = getattr(cfg, key, None)
        if isinstance(value, int) and value > 0:
            return value
    value = getattr(tokenizer, "model_max_length", None)
    if isinstance(value, int) and 0 < value < 10_000_000:
        return value
    return 2048


def _eos_ids(model, tokenizer) -> frozenset[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return frozenset(ids)


def _forward_params(model) -> set[str]:
    import inspect

    return set(inspect.signature(model.forward).parameters)


def load_model(path: str | Path, *, device: str | None = None, dtype: torch.dtype | None = None) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path).expanduser().resolve()
    check_model_dir(path)
    dev = pick_device(device)
    dt = dtype or pick_dtype(dev)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except Exception as e:  # noqa: BLE001 - re-raised with the directory named
        raise ModelLoadError(f"model directory {path}: cannot load the tokenizer ({type(e).__name__}: {e})") from e
    try:
        kwargs = {"dtype": dt}
        if dev.type == "cuda":
            kwargs["device_map"] = str(dev)  # safetensors straight to the GPU, no CPU copy
        model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise ModelLoadError(f"model directory {path}: cannot load the model ({type(e).__name__}: {e})") from e
    if dev.type != "cuda":
        model.to(dev)
    model.eval()
    model.requires_grad_(False)
    return LoadedModel(
        path=path,
        model=model,
        tokenizer=tokenizer,
        device=dev,
        dtype=dt,
        context_length=_context_length(model, tokenizer),
        eos_token_ids=_eos_ids(model, tokenizer),
        cache_arg="cache" if "cache" in _forward_params(model) else "past_key_values",
        supports_logits_to_keep="logits_to_keep" in _forward_params(model),
        has_chat_template=bool(getattr(tokenizer, "chat_template", None)),
    )


def check_pair(target: LoadedModel, draft: LoadedModel) -> None:
    """A draft must share the target's vocabulary: its token ids are fed to the target verbatim."""
    if target.tokenizer.get_vocab() != draft.tokenizer.get_vocab():
        raise ModelLoadError(
            f"draft model {draft.path} has a different tokenizer vocabulary than target {target.path}"
        )
