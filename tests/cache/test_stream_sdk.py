"""Cache hits rendered for the official OpenAI SDK, over real HTTP on loopback."""

from __future__ import annotations

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from cache.render import render_body, render_events, sse_bytes
from cache.service import CacheService
from cache.stores.memory import MemoryStore
from tests.cache.conftest import chat

ANSWER = "The capital of Australia is Canberra, not Sydney.\nIt was chosen as a compromise."


@pytest.fixture
async def sdk(encoder, policy):
    service = CacheService(MemoryStore(), encoder)
    await service.start()
    await service.store("acme", policy, "chat", chat("What is the capital of Australia?"), None, ANSWER, "stop",
                        {"prompt_tokens": 11, "completion_tokens": 17}, "backend-model")

    async def handle(request: web.Request) -> web.StreamResponse:
        # The minimal slice of the gateway's hit path: lookup, headers, render.
        body = await request.json()
        endpoint = "chat" if request.path.endswith("chat/completions") else "completions"
        look = await service.lookup("acme", policy, endpoint, body)
        assert look.hit is not None, look
        if body.get("stream"):
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            payload = sse_bytes(render_events(look.hit, endpoint, model=body["model"], include_usage=include))
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **look.headers})
            await response.prepare(request)
            await response.write(payload)
            await response.write_eof()
            return response
        return web.Response(body=render_body(look.hit, endpoint, model=body["model"]),
                            content_type="application/json", headers=look.headers)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    server = TestServer(app)
    await server.start_server()
    client = AsyncOpenAI(base_url=str(server.make_url("/v1")), api_key="sk-test", max_retries=0)
    yield client
    await client.close()
    await server.close()
    await service.aclose()


async def test_streamed_semantic_hit_is_a_valid_stream(sdk):
    stream = await sdk.chat.completions.create(
        **chat("Which city is Australia's capital?"), stream=True, stream_options={"include_usage": True})
    text, finish, usage, ids = "", None, None, set()
    async for chunk in stream:
        ids.add(chunk.id)
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    assert text == ANSWER and finish == "stop" and len(ids) == 1
    assert usage.prompt_tokens == 11 and usage.completion_tokens == 17 and usage.total_tokens == 28


async def test_non_streamed_hit_parses(sdk):
    raw = await sdk.chat.completions.with_raw_response.create(**chat("What is the capital of Australia?"))
    assert raw.headers["x-switchyard-cache"] == "hit-exact"
    assert raw.headers["x-switchyard-cache-similarity"] == "1.0000"
    completion = raw.parse()
    assert completion.choices[0].message.content == ANSWER and completion.model == "m"
    assert orjson.loads(completion.model_dump_json())["object"] == "chat.completion"
