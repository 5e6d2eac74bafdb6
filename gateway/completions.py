"""`POST /v1/chat/completions` and `POST /v1/completions`: the request pipeline of DESIGN.md.

auth → read + validate → model access → cache → classify → route → budget → limits → backend (with
escalation) → respond → record. Each step is a small function over the `RequestContext`; this module
sequences them and owns the two ways of answering (one JSON body, or an SSE stream passed through event
by event). A request runs start to finish on the runtime (policy, pools) it began with, even if the
policy is reloaded meanwhile.
"""

from __future__ import annotations

import asyncio
import time

import orjson
from aiohttp import web

from backends.base import BackendError, BackendRequest, BackendResponse, StreamInterrupted
from backends.wire import error_body
from gateway import caching, metrics
from gateway.admission import Ticket
from gateway.auth import principal_for
from gateway.context import RequestContext
from gateway.errors import APIError
from gateway.record import record
from gateway.state import REQUEST_ID, STATE, GatewayState
from gateway.understand import classify, needs_class, route
from gateway.validate import include_usage, parse_json, validate
from policies.budget import evaluate_async
from policies.ratelimit import RateDecision
from policies.routing import ROUTE_HEADER, looks_like_refusal
from policies.schema import Tenant
from policies.tokens import count_request


_SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no"}
_DONE = b"data: [DONE]\n\n"


def authenticate(request: web.Request, ctx: RequestContext) -> None:
    p = principal_for(request, ctx.runtime)
    ctx.tenant_id, ctx.tenant, ctx.key_name = p.tenant_id, p.tenant, p.key_name


async def read_body(request: web.Request, max_bytes: int) -> bytes:
    if request.content_length is not None and request.content_length > max_bytes:
        raise APIError(413, f"The request body is larger than the {max_bytes}-byte limit.", code="request_too_large")
    try:
        # A chunked body has no length up front: read one byte past the limit to know it is over.
        raw = await request.content.read(max_bytes + 1) if request.content_length is None else await request.read()
    except web.HTTPRequestEntityTooLarge:
        raw = None
    if raw is None or len(raw) > max_bytes:
        raise APIError(413, f"The request body is larger than the {max_bytes}-byte limit.", code="request_too_large")
    return raw


def resolve_model(ctx: RequestContext, tenant: Tenant, model: str) -> str:
    """Public model name → pool. Models a tenant may not use answer exactly like unknown ones (404), so
    a key cannot probe which models exist for other tenants."""
    route = ctx.runtime.config.models.get(model)
    if route is None or not tenant.may_use(model):
        raise APIError(404, f"The model '{model}' does not exist or you do not have access to it.",
                       param="model", code="model_not_found")
    return route.pool


async def apply_budget(state: GatewayState, ctx: RequestContext, tenant: Tenant) -> int:
    """Count the prompt once; reject, truncate or compress it per the tenant's budget; clamp the output.
    Returns the tokens to reserve against tokens/min: the input plus the most output it may produce."""
    counter = ctx.runtime.counters[ctx.pool]
    ctx.prompt_tokens = count_request(ctx.endpoint, ctx.body, counter)
    decision = await evaluate_async(ctx.endpoint, ctx.body, tenant.budgets, ctx.prompt_tokens, counter,
                                    state.compressor(tenant.budgets, counter))
    decision.observe()
    if decision.rejected:
        err = decision.error()
        raise APIError(400, err["message"] or "The request is over its token budget.", param=err["param"],
                       code=err["code"])
    ctx.body = decision.body
    ctx.prompt_tokens = decision.tokens_after
    ctx.max_output_tokens = decision.max_output_tokens
    ctx.output_bound_written = decision.requested_max_tokens is None and decision.clamped_to is not None
    ctx.response_headers.update(decision.headers())
    ctx.log_fields.update(decision.log_fields())
    return decision.reservation(tenant.limits.reserve_output_tokens)


async def admit(state: GatewayState, ctx: RequestContext, tenant: Tenant, reserve: int, *,
                cache_hit: bool = False) -> RateDecision:
    """Requests/min and tokens/min, taken up front; settled against the real usage when the answer ends.
    A cache hit is a request like any other but uses no backend: it takes from requests/min only."""
    decision = await state.limiter.acquire(ctx.tenant_id, ctx.key_name, tenant.limits, tokens=reserve,
                                           prompt_tokens=ctx.prompt_tokens or 0, requests_only=cache_hit)
    ctx.response_headers.update(decision.headers())
    if not decision.allowed:
        raise APIError(429, decision.error_message(), code="rate_limit_exceeded")
    return decision


async def handle_chat(request: web.Request) -> web.StreamResponse:
    return await _handle(request, "chat")


async def handle_completions(request: web.Request) -> web.StreamResponse:
    return await _handle(request, "completions")


async def _handle(request: web.Request, endpoint: str) -> web.StreamResponse:
    state: GatewayState = request.app[STATE]
    ctx = RequestContext(request_id=request[REQUEST_ID], endpoint=endpoint, body={},
                         runtime=state.runtime.current)
    ctx.response_headers["x-request-id"] = ctx.request_id
    metrics.IN_FLIGHT.inc()
    state.in_flight += 1
    try:
        return await _pipeline(request, state, ctx)
    except APIError as exc:
        ctx.status, ctx.error_code = exc.status, exc.code
        return exc.response(ctx.response_headers)
    finally:
        metrics.IN_FLIGHT.dec()
        state.in_flight -= 1
        record(state, ctx)


async def _pipeline(request: web.Request, state: GatewayState, ctx: RequestContext) -> web.StreamResponse:
    authenticate(request, ctx)
    tenant = ctx.tenant
    assert tenant is not None
    body = parse_json(await read_body(request, ctx.runtime.config.server.max_body_bytes))
    validate(ctx.endpoint, body)
    ctx.body = ctx.request_body = body
    ctx.public_model = body["model"]
    ctx.stream = bool(body.get("stream"))
    ctx.include_usage = include_usage(body)
    ctx.pool = resolve_model(ctx, tenant, ctx.public_model)
    look = await caching.lookup(state, ctx, route_override=ROUTE_HEADER in request.headers,
                                asked=caching.client_directives(request))
    if look is not None and look.hit is not None:
        await admit(state, ctx, tenant, 0, cache_hit=True)
        return await caching.respond_hit(request, ctx, look.hit)
    if needs_class(ctx):
        await classify(state, ctx)
    decision = route(request, ctx)
    ctx.pool = decision.pool
    reserve = await apply_budget(state, ctx, tenant)
    rate = await admit(state, ctx, tenant, reserve)
    # The same estimate the tokens/min limiter reserves (prompt + the most output, per choice) is what
    # the request holds on a backend member while it runs (gateway/admission.py).
    ticket = Ticket(ctx.tenant_id, max(1, reserve), tenant.limits.queue_weight)
    try:
        return await _generate(request, state, ctx, rate, decision.pools, ticket)
    finally:
        actual = None
        if ctx.usage_prompt_tokens is not None or ctx.completion_tokens:
            actual = (ctx.usage_prompt_tokens if ctx.usage_prompt_tokens is not None else ctx.prompt_tokens or 0) \
                + ctx.completion_tokens
        await state.limiter.reconcile(rate, actual)


def _served_name(ctx: RequestContext, pool: str) -> str:
    """The model name to send to `pool`: the client's own when its model maps there, else the first public
    name that does (a member's configured `model` still overrides it upstream)."""
    models = ctx.runtime.config.models
    route_ = models.get(ctx.public_model)
    if route_ is not None and route_.pool == pool:
        return ctx.public_model
    return next((name for name, m in models.items() if m.pool == pool), ctx.public_model)


async def _generate(request: web.Request, state: GatewayState, ctx: RequestContext, rate: RateDecision,
                    pools: tuple[str, ...], ticket: Ticket) -> web.StreamResponse:
    """Try the route's pools in order: a failure before the first byte, or a refusal by a smaller model,
    escalates to the next one. Time spent waiting for admission is the request's queue time, apart from
    the backend's."""
    runtime = ctx.runtime
    sent = time.perf_counter()
    for i, pool_name in enumerate(pools):
        last = i == len(pools) - 1
        ctx.pool = pool_name
        ctx.refusal_escalates = not last
        body = ctx.body
        served = _served_name(ctx, pool_name)
        if body.get("model") != served:
            body = {**body, "model": served}
        backend_request = BackendRequest(endpoint=ctx.endpoint, body=body, stream=ctx.stream,  # type: ignore[arg-type]
                                         request_id=ctx.request_id, want_usage=True,
                                         max_tokens_is_cap=ctx.output_bound_written)
        try:
            response = await runtime.pools[pool_name].send(backend_request, ticket)
        except asyncio.CancelledError:
            _queued(ctx, ticket)  # the client left, perhaps while queued
            ctx.status, ctx.error_code = 499, "client_disconnected"
            raise
        except BackendError as exc:
            _queued(ctx, ticket)
            metrics.UPSTREAM_ERRORS.labels(pool_name, exc.code or "error").inc()
            if exc.retryable and not last:
                ctx.log_fields.setdefault("escalations", []).append(f"{pool_name}: {exc.code}")
                continue
            ctx.upstream_seconds = time.perf_counter() - sent - ctx.queue_seconds
            headers = {"Retry-After": str(int(exc.retry_after + 0.999))} if exc.retry_after else None
            raise APIError(exc.status, exc.message, code=exc.code, param=exc.param, type=exc.type,
                           headers=headers) from None
        if not ctx.stream and not last and _refused(response):
            await response.aclose()
            ctx.log_fields.setdefault("escalations", []).append(f"{pool_name}: refused")
            continue
        break
    _queued(ctx, ticket)
    ctx.backend, ctx.member = response.backend_name, response.member
    ctx.response_headers["x-switchyard-route"] = pool_name
    try:
        if ctx.stream:
            return await _stream(request, state, ctx, response, rate)
        return _json(state, ctx, response)
    finally:
        await response.aclose()
        ctx.upstream_seconds = (ctx.ttlt or ctx.elapsed()) - (sent - ctx.started) - ctx.queue_seconds


def _queued(ctx: RequestContext, ticket: Ticket) -> None:
    ctx.queue_seconds = ticket.queue_seconds
    ctx.response_headers["x-switchyard-queue-ms"] = f"{ticket.queue_seconds * 1000:.1f}"


def _refused(response: BackendResponse) -> bool:
    answer = caching.answer_of(caching.parse_body(response.body or b"{}"))
    return answer is not None and looks_like_refusal(answer[0])


def _json(state: GatewayState, ctx: RequestContext, response: BackendResponse) -> web.Response:
    raw = response.body or b"{}"
    usage = response.usage
    # Parsed once, and only when something needs it: the usage (if the backend did not report it) and
    # the answer to cache.
    parsed = caching.parse_body(raw) if usage is None or ctx.cache_store else None
    if usage is None and parsed is not None:
        usage = parsed.get("usage")
    _take_usage(ctx, usage)
    ctx.status = 200
    ctx.ttft = ctx.ttlt = ctx.elapsed()
    if ctx.cache_store:
        answer = caching.answer_of(parsed)
        if answer is not None:
            state.spawn(caching.store(state, ctx, *answer, caching.fingerprint_of(parsed)))
    return web.Response(body=raw, content_type="application/json", headers=ctx.response_headers)


def _take_usage(ctx: RequestContext, usage: dict | None) -> None:
    if isinstance(usage, dict):
        ctx.usage_prompt_tokens = usage.get("prompt_tokens")
        ctx.completion_tokens = usage.get("completion_tokens") or 0


async def _stream(request: web.Request, state: GatewayState, ctx: RequestContext, response: BackendResponse,
                  rate: RateDecision) -> web.StreamResponse:
    out = web.StreamResponse(status=200, headers={**_SSE_HEADERS, **ctx.response_headers})
    await out.prepare(request)
    ctx.status = 200
    events = response.events
    assert events is not None
    write = out.write
    # Streamed output is charged against tokens/min as it flows (one token per content event until the
    # final usage settles the exact count), so a long stream cannot overrun the limit unseen.
    charge = state.limiter.charge if rate.buckets else None
    collector = caching.AnswerCollector() if ctx.cache_store else None
    try:
        async for payload in events:
            if charge is not None:
                await charge(rate, 1)
            if collector is not None:
                collector.feed(payload)
            if b'"usage":{' in payload:
                # The gateway always asks for usage; the usage-only chunk reaches the client only if it
                # asked for it too.
                chunk = orjson.loads(payload)
                _take_usage(ctx, chunk.get("usage"))
                if not ctx.include_usage and not chunk.get("choices"):
                    continue
            await write(b"data: " + payload + b"\n\n")
            if ctx.ttft is None:
                ctx.ttft = ctx.elapsed()
        await write(_DONE)
        ctx.ttlt = ctx.elapsed()
        if collector is not None and collector.finish_reason:
            state.spawn(caching.store(state, ctx, collector.text(), collector.finish_reason, collector.model,
                                      collector.fingerprint))
    except StreamInterrupted as exc:
        # Never a clean [DONE] after a broken upstream: the client must know the answer is incomplete.
        ctx.status, ctx.error_code = 502, exc.code
        metrics.UPSTREAM_ERRORS.labels(ctx.pool or "", exc.code).inc()
        ctx.ttlt = ctx.elapsed()
        await write(b"data: " + error_body(exc.message, "upstream_error", None, exc.code) + b"\n\n")
    except (ConnectionResetError, asyncio.CancelledError):
        ctx.status, ctx.error_code = 499, "client_disconnected"
        ctx.ttlt = ctx.elapsed()
        raise
    await out.write_eof()
    return out
