"""Shutting the gateway down: work still in flight (cache stores) finishes, and one piece of it that
failed neither stops the rest of the shutdown nor goes unreported."""

from __future__ import annotations

import asyncio

import structlog
from aiohttp import web

from gateway.state import STATE
from tests.gateway.conftest import in_process_app


async def test_a_failed_background_task_neither_stops_the_shutdown_nor_goes_unreported():
    app, cache = await in_process_app()
    runner = web.AppRunner(app)
    await runner.setup()
    state = app[STATE]
    finished = []

    async def failing_store():  # fails while the shutdown waits for it
        await asyncio.sleep(0.1)
        raise RuntimeError("the store broke")

    async def slow_store():
        await asyncio.sleep(0.3)
        finished.append("slow")

    with structlog.testing.capture_logs() as logs:
        state.spawn(failing_store())
        state.spawn(slow_store())
        await runner.cleanup()
    assert finished == ["slow"]  # in-flight work was waited for
    assert cache._closed  # and the steps after it ran
    assert not state.background
    assert [e["error"] for e in logs if e["event"] == "gateway.background_failed"] == ["RuntimeError"]
