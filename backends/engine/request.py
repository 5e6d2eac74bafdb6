"""What the engine is asked to do, and what it says back, independent of HTTP and asyncio."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from backends.engine.sampling import SamplingParams

Speculation = Literal["draft", "ngram", "none"]
FinishReason = Literal["stop", "length", "cancelled", "error"]


@dataclass(slots=True)
class GenerationRequest:
    request_id: str
    model: str
    """Served model name (an engine may serve several)."""
    prompt_ids: list[int]
    params: SamplingParams
    speculation: Speculation | None = None
    """None: the served model's default (its draft model when it has one, else prompt lookup)."""
    num_speculative_tokens: int | None = None
    """A fixed k; None lets k adapt to the acceptance rate."""


@dataclass(slots=True)
class Started:
    """Prefill done: the request is generating (streams may now commit to a 200)."""

    prompt_tokens: int


@dataclass(slots=True)
class Delta:
    text: str
    token_ids: list[int]


@dataclass(slots=True)
class Finished:
    reason: FinishReason
    prompt_tokens: int
    completion_tokens: int
    spec: dict
    decode_seconds: float


@dataclass(slots=True)
class Failed:
    message: str


Event = Started | Delta | Finished | Failed


@dataclass(eq=False)
class Submission:
    """A request inside the engine: the request, where its events go, and its cancel flag."""

    request: GenerationRequest
    emit: object  # Callable[[Event], None], called from the worker thread
    cancelled: threading.Event = field(default_factory=threading.Event)
