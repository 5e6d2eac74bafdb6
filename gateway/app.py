"""The aiohttp application: routes, the request-id/error middleware, startup and cleanup."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from cache.admin import ADMIN_NAME, admin_routes
from cache.service import CacheService
from gateway.auth import admin_for, principal_for
from gateway.completions import handle_chat, handle_completions
from gateway.errors import APIError
from gateway.logs import log
from gateway.runtime import RuntimeManager
from gateway.state import REQUEST_ID, STATE, GatewayState
from policies.ratelimit import RateLimiter

_HTTP_MESSAGES = {404: "Unknown request URL: {method} {path}.", 405: "Method {method} is not allowed for {path}."}


@web.middleware
async def request_id_and_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every response carries `x-request-id`; every error is OpenAI-shaped; nothing internal leaks."""
    rid = request.headers.get("x-request-id")
    if not rid or len(rid) > 128:
        rid = uuid.uuid4().hex
    request[REQUEST_ID] = rid
    try:
        response = await handler(request)
    except Exception as exc:
        if request.get(RESPONSE_STARTED):
            # The status line and part of the body are out: an error response now would be written into
            # the middle of them. Re-raised, aiohttp closes the connection and the client sees it cut.
            log.error("error_after_response_started", request_id=rid, path=request.path, error=type(exc).__name__)
            raise
        response = _error_response(request, exc, rid)
    if not response.prepared:
        response.headers.setdefault("x-request-id", rid)
    return response


def _error_response(request: web.Request, exc: Exception, rid: str) -> web.StreamResponse:
    """The OpenAI-shaped response for what a handler raised before answering."""
    if isinstance(exc, APIError):
        return exc.response()
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            raise exc
        template = _HTTP_MESSAGES.get(exc.status, "{reason}")
        message = template.format(method=request.method, path=request.path, reason=exc.reason)
        return APIError(exc.status, message, code="not_found" if exc.status == 404 else None).response()
    if isinstance(exc, (RequestPayloadError, HttpProcessingError)):  # cut short, or not in its Content-Encoding
        return APIError(400, "The request body could not be read: it was cut short, or is not encoded as its "
                             "Content-Encoding header says.", code="unreadable_body").response()
    log.error("unhandled_error", request_id=rid, path=request.path, exc_info=exc)
    return APIError(500, "The gateway hit an internal error; the request id identifies it in the logs.",
                    code="internal_error").response()


RESPONSE_STARTED = web.RequestKey("response_started", bool)
"""Set once a handler's response is prepared (headers sent): from then on no error response can follow."""


async def _mark_started(request: web.Request, response: web.StreamResponse) -> None:
    request[RESPONSE_STARTED] = True


def _json(obj: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(obj), status=status, content_type="application/json")


def _model_object(name: str) -> dict:
    return {"id": name, "object": "model", "created": 0, "owned_by": "switchyard"}


async def list_models(request: web.Request) -> web.Response:
    state = request.app[STATE]
    runtime = state.runtime.current
    p = principal_for(request, runtime)
    names = [m for m in runtime.config.models if p.tenant.may_use(m)]
    return _json({"object": "list", "data": [_model_object(m) for m in names]})


async def get_model(request: web.Request) -> web.Response:
    state = request.app[STATE]
    runtime = state.runtime.current
    p = principal_for(request, runtime)
    name = request.match_info["model"]
    if name not in runtime.config.models or not p.tenant.may_use(name):
        raise APIError(404, f"The model '{name}' does not exist or you do not have access to it.",
                       param="model", code="model_not_found")
    return _json(_model_object(name))


async def healthz(request: web.Request) -> web.Response:
    return _json({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """Ready once the runtime is built; detail for each shared service that reports a status."""
    state = request.app[STATE]
    runtime = state.runtime.current
    detail: dict[str, object] = {"policy": runtime.source if runtime else None,
                                 "pools": sorted(runtime.pools) if runtime else []}
    for name, service in state.services.items():
        status = getattr(service, "status", None)
        if callable(status):
            detail[name] = status()
    return _json({"status": "ready" if runtime else "starting", **detail}, status=200 if runtime else 503)


async def metrics_endpoint(request: web.Request) -> web.Response:
    return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def admin_reload(request: web.Request) -> web.Response:
    state = request.app[STATE]
    who = admin_for(request, state.runtime.current)
    ok = await state.runtime.reload(f"admin:{who}")
    if not ok:
        raise APIError(400, "The policy file was not applied; the previous policy stays live (see the gateway log).",
                       code="policy_rejected")
    return _json({"reloaded": True, "source": state.runtime.current.source})


def _uses_models(runtime: RuntimeManager) -> bool:
    """Whether any tenant may need the encoder or classifier (cache on, or routing by class), so they
    start loading now rather than on the first request that needs them."""
    config = runtime.current.config
    return "auto" in config.models or any(t.cache.enabled or t.routing.needs_classification
                                          for t in config.tenants.values())


def _admin_only(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    async def guarded(request: web.Request) -> web.StreamResponse:
        request[ADMIN_NAME] = admin_for(request, request.app[STATE].runtime.current)
        return await handler(request)

    return guarded


def create_app(runtime: RuntimeManager, limiter: RateLimiter, cache: CacheService | None = None, *,
               log_requests: bool = True, client_max_size: int = 64 * 1024 * 1024) -> web.Application:
    app = web.Application(middlewares=[request_id_and_errors], client_max_size=client_max_size)
    app.on_response_prepare.append(_mark_started)
    state = GatewayState(runtime=runtime, limiter=limiter, log_requests=log_requests, cache=cache)
    state.services["ratelimit"] = limiter
    state.services["models"] = state.models
    # Compression's few-shot and embedding scorers reuse the gateway's encoder once it is loaded.
    state.models.on_loaded.append(lambda models: setattr(state, "embed", models.encoder.embed_many))
    if cache is not None:
        state.services["cache"] = cache
        state.models.on_loaded.append(lambda models: setattr(cache, "encoder", models.encoder))
        def policy_of(tenant_id: str):  # the live config's, so an import follows a reloaded policy
            tenant = state.runtime.current.config.tenants.get(tenant_id)
            return tenant.cache if tenant is not None else None

        app.router.add_routes([web.route(r.method, r.path, _admin_only(r.handler))
                               for r in admin_routes(cache, policy_of)])
    app[STATE] = state
    app.router.add_post("/v1/chat/completions", handle_chat)
    app.router.add_post("/v1/completions", handle_completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model}", get_model)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_endpoint)
    app.router.add_post("/admin/policy/reload", admin_reload)

    async def lifecycle(app: web.Application):
        await runtime.start()
        if _uses_models(runtime):
            state.models.start()
        yield
        # Stores still in flight finish (each Redis call is bounded); one that failed stops no other step.
        await asyncio.gather(*state.background, return_exceptions=True)
        await runtime.aclose()
        await limiter.aclose()
        if cache is not None:
            await cache.aclose()
        await state.models.aclose()

    app.cleanup_ctx.append(lifecycle)
    return app
