"""What the running gateway holds: the live runtime and the shared services (rate limiter, cache, ...)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from cache.service import CacheService
from gateway.logs import log
from gateway.runtime import RuntimeManager
from gateway.understand import SharedModels
from policies.compression import Compressor
from policies.ratelimit import RateLimiter
from policies.schema import Budgets
from policies.tokens import TokenCounter


@dataclass
class GatewayState:
    runtime: RuntimeManager
    limiter: RateLimiter
    models: SharedModels = field(default_factory=SharedModels)
    """The sentence encoder and the prompt classifier, loaded in the background at start-up."""
    cache: CacheService | None = None
    background: set[asyncio.Task] = field(default_factory=set)
    """Work that outlives its request (cache stores): held so it is not garbage-collected mid-way."""
    log_requests: bool = True
    services: dict[str, Any] = field(default_factory=dict)
    """Services with a `status()` shown in /readyz, by name."""
    embed: Callable[[list[str]], np.ndarray] | None = None
    """The shared sentence encoder (sync, for worker threads), when one is loaded."""
    in_flight: int = 0
    """Completion requests being handled now (streams included): with one, the encoder's threads may spin."""

    _compressors: dict[tuple[int, int], Compressor] = field(default_factory=dict)

    def spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self.background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:  # said now, not at garbage collection
            exc = task.exception()
            log.error("gateway.background_failed", task=task.get_name(), error=type(exc).__name__,
                      detail=str(exc)[:200])

    def compressor(self, budgets: Budgets, counter: TokenCounter) -> Compressor | None:
        """A compressor only for tenants whose policy compresses (it is used off the event loop). One per
        (policy section, tokenizer), kept so its embedding cache stays warm across requests; a reload
        makes new policy objects and so new compressors."""
        if budgets.on_input_over != "compress":
            return None
        key = (id(budgets.compression), id(counter))
        found = self._compressors.get(key)
        if found is None or found.config is not budgets.compression:
            found = self._compressors[key] = Compressor(budgets.compression, counter, embed=self.embed)
        return found


STATE = web.AppKey("switchyard_state", GatewayState)
REQUEST_ID = web.RequestKey("request_id", str)
"""The id of a request (the client's `x-request-id`, or a new one), set first by the middleware."""
