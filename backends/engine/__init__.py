"""The local engine: Hugging Face causal LMs served with a KV cache and speculative decoding.

    loader      load a model directory (device, dtype, tokenizer, chat template, context length)
    runner      forward passes with a rollback-able KV cache
    sampling    sampling parameters and logits -> distribution
    speculative verification rules (greedy and rejection sampling), adaptive k, per-request stats
    drafters    draft-model and prompt-lookup (n-gram) drafters
    detok       incremental detokenisation and stop sequences
    worker      executes prefill / decode rounds for a sequence
    scheduler   decides which sequences run next
    engine      the worker thread loop and the asyncio handles
    openai_api  OpenAI request validation -> GenerationRequest
    responses   engine events -> OpenAI chunks / bodies
    server      `switchyard engine serve`
"""

from __future__ import annotations

from pathlib import Path

from backends.engine.engine import Engine, RequestHandle
from backends.engine.loader import LoadedModel, ModelLoadError, check_pair, load_model
from backends.engine.request import GenerationRequest, Submission
from backends.engine.sampling import SamplingParams
from backends.engine.scheduler import SCHEDULE_MODES, FifoScheduler, make_scheduler
from backends.engine.worker import DEFAULT_SPEC_K_UNDER_LOAD, DEFAULT_SPEC_MAX_BATCH, ServedModel, Worker

__all__ = [
    "DEFAULT_SPEC_K_UNDER_LOAD",
    "DEFAULT_SPEC_MAX_BATCH",
    "Engine",
    "FifoScheduler",
    "GenerationRequest",
    "LoadedModel",
    "ModelLoadError",
    "SCHEDULE_MODES",
    "RequestHandle",
    "SamplingParams",
    "ServedModel",
    "Submission",
    "Worker",
    "build_engine",
    "make_scheduler",
    "load_model",
]


def build_engine(
    model: str | Path,
    draft: str | Path | None = None,
    *,
    name: str,
    draft_name: str | None = None,
    device: str | None = None,
    max_running: int | None = None,
    schedule: str = "continuous",
    step_token_budget: int = 256,
    batch_threshold: int = 256,
    spec_max_batch: int | None = DEFAULT_SPEC_MAX_BATCH,
    spec_k_under_load: int = DEFAULT_SPEC_K_UNDER_LOAD,
) -> Engine:
    """Load a target (and draft) and return an engine, not yet started, that serves `name`
    (speculative when a draft is given) and, when `draft_name` is set, the draft alone as well.
    The draft's weights are loaded once and shared by both. `schedule` picks the scheduling mode
    (`fifo`, `token`, `continuous`; see docs/scheduling.md); speculation is turned down (at most
    `spec_k_under_load` drafts, 0: off) in steps with more than `spec_max_batch` decoding sequences
    (None: never)."""
    scheduler = make_scheduler(
        schedule, max_running=max_running, step_token_budget=step_token_budget, batch_threshold=batch_threshold
    )
    target = load_model(model, device=device)
    models = {}
    draft_lm = None
    if draft is not None:
        draft_lm = load_model(draft, device=device)
        check_pair(target, draft_lm)
    models[name] = ServedModel(name=name, target=target, draft=draft_lm)
    if draft_name is not None:
        if draft_lm is None:
            raise ValueError("draft_name needs a draft model")
        models[draft_name] = ServedModel(name=draft_name, target=draft_lm, draft=None)
    return Engine(models, scheduler, spec_max_batch=spec_max_batch, spec_k_under_load=spec_k_under_load)
