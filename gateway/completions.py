"""`POST /v1/chat/completions` and `POST /v1/completions`: the request pipeline of DESIGN.md.

auth → read + validate → policy (model access, budgets) → limits → backend → respond → record.
Each step is a small function over the `RequestContext`; this module only sequences them and owns the
two ways of answering (one JSON body, or an SSE stream passed through event by event).
"""

from __future__ import annotations

import asyncio
import time

import orjson
from aiohttp import web

from backends.base import BackendError, BackendRequest, BackendResponse, StreamInterrupted
from backends.wire import error_body
from gateway import metrics
from gateway.auth import principal_for
from gateway.context import RequestContext
from gateway.errors import APIError
from gateway.record import record
from gateway.state import STATE, GatewayState
from gateway.validate import include_usage, parse_json, requested_max_tokens, validate
from policies.schema import Tenant

_SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no"}
_DONE = b"data: [DONE]\n\n"


def authenticate(request: web.Request, state: GatewayState, ctx: RequestContext) -> None:
    p = principal_for(request, state.runtime.current)
    ctx.tenant_id, ctx.tenant, ctx.key_name = p.tenant_id, p.tenant, p.key_name


async def read_body(request: web.Request, max_bytes: int) -> bytes:
    if request.content_length is not None and request.content_length > max_bytes:
        raise APIError(413, f"The request body is larger than the {max_bytes}-byte limit.", code="request_too_large")
    try:
        raw = await request.content.read(max_bytes + 1) if request.content_length is None else await request.read()
    except web.HTTPRequestEntityTooLarge:
        raw = b"x" * (max_bytes + 1)
    if len(raw) > max_bytes:
        raise APIError(413, f"The request body is larger than the {max_bytes}-byte limit.", code="request_too_large")
    return raw


def resolve_model(state: GatewayState, tenant: Tenant, model: str) -> str:
    """Public model name → pool. Models a tenant may not use answer exactly like unknown ones (404), so
    a key cannot probe which models exist for other tenants."""
    route = state.runtime.current.config.models.get(model)
    if route is None or not tenant.may_use(model):
        raise APIError(404, f"The model '{model}' does not exist or you do not have access to it.",
                       param="model", code="model_not_found")
    return route.pool


def apply_output_budget(ctx: RequestContext, tenant: Tenant) -> None:
    """Clamp the requested output to the tenant's per-turn budget, and say so in a header."""
    cap = tenant.budgets.max_output_tokens
    asked = requested_max_tokens(ctx.endpoint, ctx.body)
    ctx.max_output_tokens = asked
    if cap is None or (asked is not None and asked <= cap):
        return
    body = ctx.body
    if ctx.endpoint == "chat" and "max_completion_tokens" in body:
        body["max_completion_tokens"] = cap
    body["max_tokens"] = cap
    ctx.max_output_tokens = cap
    if asked is not None:
        ctx.response_headers["x-switchyard-max-tokens-clamped"] = str(cap)


async def handle_chat(request: web.Request) -> web.StreamResponse:
    return await _handle(request, "chat")


async def handle_completions(request: web.Request) -> web.StreamResponse:
    return await _handle(request, "completions")


async def _handle(request: web.Request, endpoint: str) -> web.StreamResponse:
    state: GatewayState = request.app[STATE]
    ctx = RequestContext(request_id=request["request_id"], endpoint=endpoint, body={})
    ctx.response_headers["x-request-id"] = ctx.request_id
    metrics.IN_FLIGHT.inc()
    try:
        return await _pipeline(request, state, ctx)
    except APIError as exc:
        ctx.status, ctx.error_code = exc.status, exc.code
        return exc.response(ctx.response_headers)
    finally:
        metrics.IN_FLIGHT.dec()
        record(state, ctx)


async def _pipeline(request: web.Request, state: GatewayState, ctx: RequestContext) -> web.StreamResponse:
    authenticate(request, state, ctx)
    tenant = ctx.tenant
    assert tenant is not None
    body = parse_json(await read_body(request, state.runtime.current.config.server.max_body_bytes))
    validate(ctx.endpoint, body)
    ctx.body = body
    ctx.public_model = body["model"]
    ctx.stream = bool(body.get("stream"))
    ctx.include_usage = include_usage(body)
    ctx.pool = resolve_model(state, tenant, ctx.public_model)
    apply_output_budget(ctx, tenant)
    await state.admit(ctx)

    pool = state.runtime.current.pools[ctx.pool]
    backend_request = BackendRequest(endpoint=ctx.endpoint, body=body, stream=ctx.stream,  # type: ignore[arg-type]
                                     request_id=ctx.request_id, want_usage=True)
    sent = time.perf_counter()
    try:
        response = await pool.send(backend_request)
    except BackendError as exc:
        ctx.upstream_seconds = time.perf_counter() - sent
        metrics.UPSTREAM_ERRORS.labels(ctx.pool, exc.code or "error").inc()
        headers = {"Retry-After": str(int(exc.retry_after + 0.999))} if exc.retry_after else None
        raise APIError(exc.status, exc.message, code=exc.code, param=exc.param, type=exc.type,
                       headers=headers) from None
    ctx.backend, ctx.member = response.backend_name, response.member
    ctx.response_headers["x-switchyard-route"] = ctx.pool
    try:
        if ctx.stream:
            return await _stream(request, ctx, response, sent)
        return _json(ctx, response, sent)
    finally:
        await response.aclose()
        ctx.upstream_seconds = (ctx.ttlt or ctx.elapsed()) - (sent - ctx.started)


def _json(ctx: RequestContext, response: BackendResponse, sent: float) -> web.Response:
    raw = response.body or b"{}"
    usage = response.usage
    if usage is None:
        try:
            usage = orjson.loads(raw).get("usage")
        except (orjson.JSONDecodeError, AttributeError):
            usage = None
    _take_usage(ctx, usage)
    ctx.status = 200
    ctx.ttft = ctx.ttlt = ctx.elapsed()
    return web.Response(body=raw, content_type="application/json", headers=ctx.response_headers)


def _take_usage(ctx: RequestContext, usage: dict | None) -> None:
    if isinstance(usage, dict):
        ctx.usage_prompt_tokens = usage.get("prompt_tokens")
        ctx.completion_tokens = usage.get("completion_tokens") or 0


async def _stream(request: web.Request, ctx: RequestContext, response: BackendResponse, sent: float) -> web.StreamResponse:
    out = web.StreamResponse(status=200, headers={**_SSE_HEADERS, **ctx.response_headers})
    await out.prepare(request)
    ctx.status = 200
    events = response.events
    assert events is not None
    write = out.write
    try:
        async for payload in events:
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
