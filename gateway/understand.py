"""Steps 5, 7 and 9: embed the prompt once, classify it, decide the route.

The embedding is computed only when a later step needs it (a semantic cache lookup after an exact miss,
a routing decision that depends on the class), at most once, and shared through `ctx.embedding`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web

from gateway.context import RequestContext
from gateway.errors import APIError
from gateway.logs import log
from policies.routing import ROUTE_HEADER, RouteDecision, RouteError, decide_route
from policies.schema import AUTO_MODEL

if TYPE_CHECKING:
    from gateway.state import GatewayState


class SharedModels:
    """The encoder and the classifier, loaded once in the background at start-up (seconds of work that
    must not hold up a pure proxy); the first request that needs them waits for the load."""

    def __init__(self) -> None:
        self._task: asyncio.Task | None = None
        self.encoder = None
        self.classifier = None
        self.error: str | None = None
        self.on_loaded: list = []
        """Callbacks(models) run once both are loaded (e.g. to hand the encoder to the cache)."""

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._load(), name="load-encoder-classifier")

    async def _load(self) -> None:
        from cache.encoder import Encoder
        from classifiers.runtime import PromptClassifier

        try:
            self.encoder = await asyncio.to_thread(Encoder.load)
            self.classifier = await asyncio.to_thread(PromptClassifier)
        except Exception as exc:  # keep serving: requests that need them are answered without them
            self.error = repr(exc)
            return
        for callback in self.on_loaded:
            callback(self)

    async def ready(self) -> bool:
        self.start()
        assert self._task is not None
        await asyncio.shield(self._task)
        return self.encoder is not None and self.classifier is not None

    def status(self) -> dict:
        loaded = self._task is not None and self._task.done() and self.encoder is not None
        return {"loaded": loaded, "encoder": getattr(self.encoder, "backend", None), "error": self.error}

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self.encoder is not None:
            await self.encoder.aclose()


def needs_class(ctx: RequestContext) -> bool:
    tenant = ctx.tenant
    assert tenant is not None
    return ctx.public_model == AUTO_MODEL or tenant.routing.needs_classification


async def embed(state: GatewayState, ctx: RequestContext) -> None:
    """The one embedding of this request (cache and classifier share it), tried at most once."""
    if ctx.embedding is not None or ctx.prompt_text is not None:  # prompt_text is set by the one attempt
        return
    from cache.embed_text import embedding_text

    # The client's words: compression may have rewritten ctx.body by the time a store asks for the vector
    text = embedding_text(ctx.endpoint, ctx.request_body or ctx.body)
    if not text or not await state.models.ready():
        return
    ctx.prompt_text = text
    try:
        # The only request in flight: nothing else needs the cores while the model runs (spinning threads)
        ctx.embedding = await state.models.encoder.embed(text, alone=state.in_flight <= 1)
    except Exception as exc:  # noqa: BLE001 - without a vector: no semantic cache, no class; the request goes on
        log.error("encode_failed", request_id=ctx.request_id, error=type(exc).__name__, detail=str(exc)[:200])


async def classify(state: GatewayState, ctx: RequestContext) -> None:
    await embed(state, ctx)
    if ctx.embedding is None:
        return
    result = state.models.classifier.classify(ctx.embedding)
    ctx.task_class, ctx.class_confidence = result.label, result.confidence
    ctx.response_headers["x-switchyard-class"] = result.label


def route(request: web.Request, ctx: RequestContext) -> RouteDecision:
    runtime = ctx.runtime
    tenant = ctx.tenant
    assert tenant is not None
    try:
        decision = decide_route(
            tenant.routing, ctx.public_model,
            model_pools={name: m.pool for name, m in runtime.config.models.items()},
            available_pools=[name for name, pool in runtime.pools.items() if pool.available()],
            task_class=ctx.task_class, confidence=ctx.class_confidence, prompt_tokens=ctx.prompt_tokens,
            header_route=request.headers.get(ROUTE_HEADER),
        )
    except RouteError as exc:
        raise APIError(exc.status, exc.message, param=exc.param, code=exc.code, type=exc.type) from None
    ctx.log_fields["route_reason"] = decision.reason
    return decision
