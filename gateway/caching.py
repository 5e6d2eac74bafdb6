"""Step 6 (answer from cache) and the cache half of step 12 (store a complete answer).

A hit is answered in the shape the client asked for (one JSON body, or an SSE stream the SDKs accept)
without touching a backend. A miss that the policy allows to be cached collects the answer as it goes
out and stores it only once it finished cleanly (`stop` / `length`); a failed, truncated or cancelled
response is never stored.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from cache import directives
from cache.entry import fingerprint_or_none
from cache.render import render_body, render_events, sse_bytes
from gateway.context import RequestContext
from gateway.errors import APIError
from gateway.understand import embed
from policies.routing import looks_like_refusal
from policies.tokens import count_request

if TYPE_CHECKING:
    from gateway.state import GatewayState


def request_vector(state: GatewayState, ctx: RequestContext):
    """The request's vector for the cache, as a function it calls only when it needs one (after an exact
    miss in a namespace with entries; for a store): the embed step's, computed at most once per request."""

    async def vector():
        await embed(state, ctx)
        return ctx.embedding

    return vector


_scopes: tuple[Any, dict[tuple[str, str], str]] = (None, {})  # (runtime, (tenant, model) → scope)


def answer_scope(ctx: RequestContext) -> str:
    """A digest of what, besides the request, decides its answer: the tenant's budgets (output clamp,
    compression), routing and guardrails, and the model's route and pool. Part of every cache key, so
    an entry made under one policy is never served after a reload changes it. Memoised for the current
    runtime (a reload starts afresh; nothing of an old runtime is kept)."""
    global _scopes
    runtime, tenant = ctx.runtime, ctx.tenant
    assert tenant is not None
    if _scopes[0] is not runtime:
        _scopes = (runtime, {})
    memo = _scopes[1]
    found = memo.get((ctx.tenant_id, ctx.public_model))
    if found is not None:
        return found
    route = runtime.config.models.get(ctx.public_model)
    pool = runtime.config.pools.get(route.pool) if route is not None else None
    parts = {name: part.model_dump(mode="json") if part is not None else None
             for name, part in (("budgets", tenant.budgets), ("routing", tenant.routing),
                                ("guardrails", tenant.guardrails), ("route", route), ("pool", pool))}
    digest = hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]
    memo[(ctx.tenant_id, ctx.public_model)] = digest
    return digest


def client_directives(request: web.Request) -> directives.CacheDirectives:
    """The request's `x-switchyard-cache-control` (cache/directives.py); a bad one is the client's error."""
    try:  # a header sent on several lines is one list (RFC 9110 §5.3)
        return directives.parse(", ".join(request.headers.getall(directives.HEADER, ())))
    except ValueError as exc:
        raise APIError(400, f"Invalid {directives.HEADER} header: {exc}.", param=directives.HEADER,
                       code="invalid_cache_control") from None


async def lookup(state: GatewayState, ctx: RequestContext, *, route_override: bool = False,
                 asked: directives.CacheDirectives = directives.NONE) -> Any:
    """The cache's verdict for this request (a bypass too: policy off, not deterministic, a routing
    override, ... is counted and named in the header), or None when the gateway runs without a cache.
    `asked`: the client's directives; with `only-if-cached` anything but a hit is a 504 here."""
    service = state.cache
    tenant = ctx.tenant
    assert tenant is not None
    look = None
    if service is not None:
        # A request that picks its own pool (x-switchyard-route) is answered by that pool: it neither takes
        # a hit made elsewhere (nor skips the header's permission check) nor leaves one for others.
        look = await service.lookup(ctx.tenant_id, tenant.cache, ctx.endpoint, ctx.body,
                                    request_vector(state, ctx) if tenant.cache.semantic else None,
                                    scope=answer_scope(ctx), bypass="route override" if route_override else None,
                                    max_age=asked.max_age)
        ctx.cache_result = look.result
        if look.reason:
            ctx.log_fields["cache_reason"] = look.reason  # why a bypass or a miss: the request log says
        ctx.response_headers.update(look.headers)
        ctx.cache_store = look.result == "miss" and not asked.no_store and int(ctx.body.get("n") or 1) == 1
    if asked.only_if_cached and (look is None or look.hit is None):
        # 504 is HTTP's answer to only-if-cached (RFC 9111); nothing timed out, and the request's own
        # directive is why it has no answer. The OpenAI SDKs retry a 5xx unless told not to.
        raise APIError(504, f"No cached answer for this request, and {directives.HEADER} says only-if-cached.",
                       code="not_cached", type="invalid_request_error", headers={"x-should-retry": "false"})
    return look


def _prompt_tokens(ctx: RequestContext, hit: Any) -> int | None:
    """This request's prompt tokens for a semantic hit (its wording is not the cached one's), counted as
    the budget step counts them; None for an exact hit (the stored count is this request's)."""
    counter = ctx.runtime.counters.get(ctx.pool) if hit.kind == "semantic" and ctx.pool else None
    return None if counter is None else count_request(ctx.endpoint, ctx.request_body, counter)


async def respond_hit(request: web.Request, ctx: RequestContext, hit: Any) -> web.StreamResponse:
    usage = hit.usage or {}
    prompt_tokens = _prompt_tokens(ctx, hit)
    ctx.usage_prompt_tokens = prompt_tokens if prompt_tokens is not None else usage.get("prompt_tokens")
    ctx.completion_tokens = usage.get("completion_tokens") or 0
    ctx.backend = "cache"
    ctx.status = 200
    model = hit.model or ctx.public_model  # what the original answer reported: 'auto' names the routed model
    if not ctx.stream:
        ctx.ttft = ctx.ttlt = ctx.elapsed()
        return web.Response(body=render_body(hit, ctx.endpoint, model=model, prompt_tokens=prompt_tokens),
                            content_type="application/json", headers=ctx.response_headers)
    out = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8",
                                      "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
                                      **ctx.response_headers})
    await out.prepare(request)
    events = render_events(hit, ctx.endpoint, model=model, include_usage=ctx.include_usage,
                           prompt_tokens=prompt_tokens)
    ctx.ttft = ctx.elapsed()
    await out.write(sse_bytes(events))
    ctx.ttlt = ctx.elapsed()
    await out.write_eof()
    return out


# Parts of an answer that a cached text cannot replay: an answer that has any is not stored (a tool call
# can come with finish_reason "stop" when tool_choice names the function; vLLM's reasoning models send
# their reasoning next to the content).
UNREPLAYABLE = ("tool_calls", "function_call", "refusal", "audio", "reasoning_content", "reasoning")


def _replayable(message: dict) -> bool:
    return not any(message.get(name) for name in UNREPLAYABLE)


class AnswerCollector:
    """Collects a streamed answer (single choice) so it can be stored once it completes: `finish_reason`
    stays None (nothing to store) unless the stream finished and held nothing but text."""

    __slots__ = ("parts", "finish_reason", "model", "fingerprint", "replayable")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.model = ""
        self.fingerprint: str | None = None
        self.replayable = True

    def feed(self, payload: bytes) -> None:
        try:
            chunk = orjson.loads(payload)
            choice = chunk["choices"][0]
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
            return
        if not isinstance(choice, dict):
            return
        self.model = chunk.get("model") or self.model
        self.fingerprint = fingerprint_of(chunk) or self.fingerprint
        if "text" in choice:
            text = choice.get("text")
        else:
            delta = choice.get("delta") or {}
            text = delta.get("content") if isinstance(delta, dict) else None
            if not isinstance(delta, dict) or not _replayable(delta):
                self.replayable = False
        if isinstance(text, str) and text:
            self.parts.append(text)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"] if self.replayable else None

    def text(self) -> str:
        return "".join(self.parts)


def parse_body(raw: bytes) -> dict | None:
    """A non-streaming response body as a dict, or None when it is not a JSON object."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


def answer_of(body: dict | None) -> tuple[str, str, str] | None:
    """(text, finish_reason, model) of the first choice of a complete non-streaming answer; None when
    there is none or it holds more than text (tool calls, a refusal: `UNREPLAYABLE`)."""
    try:
        choice = body["choices"][0]  # type: ignore[index]
        if "text" in choice:
            text = choice.get("text")
        else:
            message = choice.get("message") or {}
            text = message.get("content") if _replayable(message) else None
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    if not isinstance(text, str):
        return None
    return text, choice.get("finish_reason") or "", body.get("model") or ""  # type: ignore[union-attr]


def fingerprint_of(body: dict | None) -> str | None:
    """The `system_fingerprint` an answer reported (a hit replays it: the same backend configuration
    made that answer), or None."""
    return fingerprint_or_none(body.get("system_fingerprint")) if isinstance(body, dict) else None


async def store(state: GatewayState, ctx: RequestContext, text: str, finish_reason: str, model: str,
                fingerprint: str | None = None) -> None:
    tenant = ctx.tenant
    assert tenant is not None and state.cache is not None
    if ctx.refusal_escalates and looks_like_refusal(text):
        # A streamed refusal reached its client (a stream cannot escalate), but the same request made
        # without streaming would have gone to the next pool: it must not find this answer cached.
        return
    usage = {"prompt_tokens": ctx.usage_prompt_tokens or ctx.prompt_tokens or 0,
             "completion_tokens": ctx.completion_tokens}
    entry_id = await state.cache.store(ctx.tenant_id, tenant.cache, ctx.endpoint, ctx.request_body,
                                       request_vector(state, ctx), text, finish_reason, usage, model,
                                       scope=answer_scope(ctx), system_fingerprint=fingerprint)
    if entry_id is not None:
        ctx.log_fields["cache_stored"] = entry_id
