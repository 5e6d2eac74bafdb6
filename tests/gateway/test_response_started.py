"""An error after a handler has started its response (an SSE stream under way) cannot become an error
response: the connection is closed and the client sees the stream cut, never a second status line
written into the middle of it. Before an answer has started, the same error is an OpenAI-shaped 500."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web

from tests.gateway.conftest import in_process_app
from tests.redis_server import free_port


async def _breaks_mid_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(b'data: {"part": 1}\n\n')
    raise RuntimeError("broke after the first event")


async def _breaks_before_answering(request: web.Request) -> web.StreamResponse:
    raise RuntimeError("broke before answering")


@pytest.fixture
async def app_url():
    app, _ = await in_process_app()
    app.router.add_get("/test/mid-stream", _breaks_mid_stream)
    app.router.add_get("/test/before", _breaks_before_answering)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def test_an_error_mid_stream_cuts_the_stream_and_writes_nothing_into_it(app_url):
    received = b""
    async with aiohttp.ClientSession() as session, session.get(app_url + "/test/mid-stream") as resp:
        assert resp.status == 200
        with pytest.raises(aiohttp.ClientPayloadError):  # cut, not ended
            async for chunk in resp.content.iter_any():
                received += chunk
    assert received == b'data: {"part": 1}\n\n'


async def test_the_same_error_before_answering_is_an_openai_shaped_500(app_url):
    async with aiohttp.ClientSession() as session, session.get(app_url + "/test/before") as resp:
        body = await resp.json()
    assert resp.status == 500 and body["error"]["code"] == "internal_error"
    assert "broke" not in body["error"]["message"]
