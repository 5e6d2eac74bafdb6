"""Run the gateway: uvloop when available, client disconnects cancel the handler (and so the upstream)."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
from pathlib import Path

from aiohttp import web

from backends.local import EngineOptions, configure_engine_host
from cache.service import CacheService
from gateway.app import create_app
from gateway.logs import log
from gateway.runtime import RuntimeManager
from policies.ratelimit import RateLimiter
from policies.schema import GatewayConfig


async def serve(config: GatewayConfig, source: str, path: Path | None, host: str, port: int,
                log_requests: bool = True, ready: asyncio.Event | None = None) -> None:
    # One in-process engine serves every `kind: local` member; its scheduling is set once, at start.
    configure_engine_host(EngineOptions.from_env(settings=config.server.local_engine))
    runtime = RuntimeManager(config, source, path)
    redis_url = config.server.redis_url or os.environ.get("SWITCHYARD_REDIS_URL")
    limiter = await RateLimiter.create(redis_url)
    cache = await CacheService.create(redis_url, load_encoder=False)
    app = create_app(runtime, limiter, cache, log_requests=log_requests)
    # handler_cancellation: a client that goes away cancels its handler at once, which closes the
    # upstream connection and so stops generation there.
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    # Start-up imports (torch, transformers, faiss) leave a large, long-lived heap; freezing it keeps the
    # cyclic GC's full collections from rescanning it on the request path (they showed as p99 spikes).
    gc.collect()
    gc.freeze()
    site = web.TCPSite(runner, host, port, backlog=1024, reuse_address=True)
    await site.start()
    log.info("listening", host=host, port=port, policy=source)
    print(f"Switchyard listening on http://{host}:{port}/v1", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        log.info("shutting_down")
        await runner.cleanup()


def run(coro) -> None:
    try:
        import uvloop

        uvloop.run(coro)
    except ImportError:
        asyncio.run(coro)
