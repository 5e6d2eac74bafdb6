"""Prometheus metrics of the local engine (in-process backend and `switchyard engine serve`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter(
    "switchyard_engine_requests_total", "Requests finished, by finish reason.", ["model", "finish_reason"]
)
PROMPT_TOKENS = Counter("switchyard_engine_prompt_tokens_total", "Prompt tokens prefilled.", ["model"])
GENERATION_TOKENS = Counter("switchyard_engine_generation_tokens_total", "Tokens generated.", ["model"])
TARGET_PASSES = Counter(
    "switchyard_engine_target_forward_passes_total", "Target model decode forward passes.", ["model"]
)
SPEC_PROPOSED = Counter(
    "switchyard_engine_spec_proposed_tokens_total", "Draft tokens proposed.", ["model", "drafter"]
)
SPEC_ACCEPTED = Counter(
    "switchyard_engine_spec_accepted_tokens_total", "Draft tokens accepted by the target.", ["model", "drafter"]
)
ACCEPTANCE = Gauge(
    "switchyard_engine_spec_acceptance_rate", "Acceptance rate of the last finished request.", ["model", "drafter"]
)
TOKENS_PER_SECOND = Gauge(
    "switchyard_engine_tokens_per_second", "Decode tokens/s of the last finished request.", ["model"]
)
QUEUE_DEPTH = Gauge("switchyard_engine_queue_depth", "Requests waiting to start.")
RUNNING = Gauge("switchyard_engine_running_requests", "Requests generating now.")
TTFT = Histogram(
    "switchyard_engine_time_to_first_token_seconds",
    "Submission to first generated token.",
    ["model"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
STEP_SECONDS = Histogram(
    "switchyard_engine_step_seconds",
    "One engine step (one batched forward pass of every planned row), by whether it carried prompt "
    "chunks (prefill) or only decode rounds (decode). Every request in flight waits on each step.",
    ["kind"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5),
)
STEP_ROWS = Histogram(
    "switchyard_engine_step_rows", "Sequences advanced in one engine step.",
    buckets=(1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256),
)
KV_SLOTS = Gauge("switchyard_engine_kv_slots", "KV cache slots reserved per model (sequences it can hold "
                 "without growing the store).", ["model"])
LATE_JOINS = Counter("switchyard_engine_late_joins_total", "Requests that joined a step already in flight "
                     "(arrived while it drafted; continuous mode).")
