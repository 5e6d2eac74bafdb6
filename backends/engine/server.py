"""`switchyard engine serve`: the local engine as its own OpenAI-compatible HTTP server.

Routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /healthz, GET /metrics.
The app runs with aiohttp's handler cancellation on, so a client that disconnects cancels its
handler, and the handler's `finally` cancels generation in the engine.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from backends import wire
from backends.engine import DEFAULT_SPEC_K_UNDER_LOAD, DEFAULT_SPEC_MAX_BATCH, Engine, build_engine
from backends.engine.openai_api import InvalidRequest, parse_request
from backends.engine.responses import GenerationFailed, Meta, collect, stream_chunks, wait_started

log = logging.getLogger("switchyard.engine.server")
ENGINE_KEY = web.AppKey("engine", Engine)


def error_response(status: int, message: str, type: str, param: str | None = None, code: str | None = None) -> web.Response:
    return web.Response(
        status=status, body=wire.error_body(message, type, param, code), content_type="application/json"
    )


async def _completions(request: web.Request, endpoint: str) -> web.StreamResponse:
    engine = request.app[ENGINE_KEY]
    try:
        body = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return error_response(400, "the request body is not valid JSON", "invalid_request_error", None, "invalid_json")
    if not isinstance(body, dict):
        return error_response(400, "the request body must be a JSON object", "invalid_request_error", None, "invalid_json")
    name = body.get("model")
    if not isinstance(name, str) or not name:
        return error_response(400, "'model' is required", "invalid_request_error", "model", "missing_required_parameter")
    served = engine.models.get(name)
    if served is None:
        return error_response(
            404, f"The model '{name}' does not exist. Available: {sorted(engine.models)}",
            "invalid_request_error", "model", "model_not_found",
        )
    request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
    try:
        parsed = await asyncio.to_thread(parse_request, endpoint, body, served, request_id)
    except InvalidRequest as e:
        return error_response(e.status, e.message, e.type, e.param, e.code)
    meta = Meta(id=wire.new_id(endpoint), created=wire.now(), model=parsed.model_name)
    handle = engine.submit(parsed.generation)
    try:
        await wait_started(handle)
        if not parsed.stream:
            payload, _ = await collect(handle, parsed, meta)
            return web.Response(body=payload, content_type="application/json")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Request-Id": request_id}
        )
        await response.prepare(request)
        chunks = stream_chunks(handle, parsed, meta, parsed.include_usage)
        try:
            async for chunk in chunks:
                await response.write(b"data: " + chunk + b"\n\n")
            await response.write(b"data: [DONE]\n\n")
        except GenerationFailed as e:
            # Mid-stream failure: an error event and no [DONE], so clients see the stream broke.
            await response.write(b"data: " + wire.error_body(str(e), "server_error", None, "generation_failed") + b"\n\n")
        except ConnectionResetError:  # client gone: chunks' finally already cancelled generation
            pass
        finally:
            await chunks.aclose()
        return response
    except GenerationFailed as e:
        return error_response(500, str(e), "server_error", None, "generation_failed")
    finally:
        handle.cancel()  # no-op when finished; stops generation when the handler is cancelled


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _completions(request, "chat")


async def completions(request: web.Request) -> web.StreamResponse:
    return await _completions(request, "completions")


async def models(request: web.Request) -> web.Response:
    engine = request.app[ENGINE_KEY]
    data = [
        {
            "id": name,
            "object": "model",
            "created": 0,
            "owned_by": "switchyard",
            "root": str(served.target.path),
            "max_model_len": served.target.context_length,
            "draft": str(served.draft.path) if served.draft is not None else None,
        }
        for name, served in engine.models.items()
    ]
    return web.json_response({"object": "list", "data": data}, dumps=lambda o: orjson.dumps(o).decode())


async def healthz(request: web.Request) -> web.Response:
    engine = request.app[ENGINE_KEY]
    if not engine.alive:
        return web.json_response({"status": "down"}, status=503)
    return web.json_response({"status": "ok", "waiting": engine.waiting, "running": engine.running})


async def metrics(request: web.Request) -> web.Response:
    return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})


@web.middleware
async def openai_errors(request: web.Request, handler):
    """Nothing internal leaks: unknown routes and crashes get OpenAI-shaped errors."""
    try:
        return await handler(request)
    except web.HTTPException as e:
        if e.status >= 400:
            return error_response(e.status, e.reason, "invalid_request_error", None, None)
        raise
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001
        log.exception("unhandled error on %s", request.path)
        return error_response(500, "internal server error", "server_error", None, None)


def make_app(engine: Engine) -> web.Application:
    app = web.Application(middlewares=[openai_errors], client_max_size=32 * 1024 * 1024)
    app[ENGINE_KEY] = engine

    async def lifecycle(app: web.Application):
        engine.start()
        yield
        await asyncio.to_thread(engine.shutdown)

    app.cleanup_ctx.append(lifecycle)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/completions", completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app


def serve(
    model: Path,
    draft: Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8001,
    name: str | None = None,
    draft_name: str | None = None,
    device: str | None = None,
    max_running: int | None = None,
    schedule: str = "continuous",
    step_token_budget: int = 256,
    batch_threshold: int = 256,
    spec_max_batch: int | None = DEFAULT_SPEC_MAX_BATCH,
    spec_k_under_load: int = DEFAULT_SPEC_K_UNDER_LOAD,
) -> None:
    """Load the models (failing fast with the directory named), then serve until interrupted."""
    served_name = name or Path(model).resolve().name
    engine = build_engine(
        model, draft, name=served_name, draft_name=draft_name, device=device, max_running=max_running,
        schedule=schedule, step_token_budget=step_token_budget, batch_threshold=batch_threshold,
        spec_max_batch=spec_max_batch, spec_k_under_load=spec_k_under_load,
    )
    print(
        f"switchyard engine: serving {sorted(engine.models)} on http://{host}:{port} "
        f"(device {next(iter(engine.models.values())).target.device}, schedule {schedule})",
        flush=True,
    )
    web.run_app(make_app(engine), host=host, port=port, handler_cancellation=True, print=None, access_log=None)
