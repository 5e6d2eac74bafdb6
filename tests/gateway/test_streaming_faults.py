"""Streams that go wrong: an upstream dying mid-stream, a client disconnecting, failover before byte one."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import openai
import pytest

from tests.processes import TENANT_KEYS, gateway_config, start_gateway, start_mock_upstream, upstream_stats
from tests.redis_server import free_port

AUTH = {"Authorization": f"Bearer {TENANT_KEYS['acme']}"}


async def read_sse(gateway, body: dict) -> tuple[int, list[bytes]]:
    async with aiohttp.ClientSession() as s:
        async with s.post(gateway.url + "/v1/chat/completions", json=body, headers=AUTH) as resp:
            raw = await resp.read()
    return resp.status, [e for e in raw.split(b"\n\n") if e]


@pytest.mark.parametrize("fault", [{"die_after": 3}, {"error_after": 3}])
async def test_upstream_death_mid_stream_ends_with_error_not_done(gateway, fault):
    body = {"model": "small", "messages": [{"role": "user", "content": "x"}], "max_tokens": 10, "stream": True,
            "mock": fault}
    status, events = await read_sse(gateway, body)
    assert status == 200  # headers were already sent when the upstream died
    assert events[-1] != b"data: [DONE]" and all(e != b"data: [DONE]" for e in events)
    last = json.loads(events[-1][len(b"data: "):])
    assert set(last["error"]) == {"message", "type", "param", "code"}
    content = [json.loads(e[6:]) for e in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in content) == "w0 w1 w2"


def test_sdk_raises_on_mid_stream_death(gateway):
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    stream = client.chat.completions.create(model="small", messages=[{"role": "user", "content": "x"}],
                                            max_tokens=10, stream=True, extra_body={"mock": {"die_after": 2}})
    with pytest.raises(openai.APIError):
        for _ in stream:
            pass


async def test_client_disconnect_cancels_upstream(gateway, upstream):
    before = upstream_stats(upstream)["cancelled"]
    body = {"model": "small", "messages": [{"role": "user", "content": "x"}], "max_tokens": 400, "stream": True,
            "mock": {"token_delay_ms": 50}}
    async with aiohttp.ClientSession() as s:
        async with s.post(gateway.url + "/v1/chat/completions", json=body, headers=AUTH) as resp:
            await resp.content.readline()  # the stream has started
        # leaving the block closes the connection with ~395 tokens still to come
    deadline = time.monotonic() + 10
    while upstream_stats(upstream)["cancelled"] == before and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert upstream_stats(upstream)["cancelled"] == before + 1


async def test_client_disconnect_cancels_non_streaming_upstream(gateway, upstream):
    before = upstream_stats(upstream)
    body = {"model": "small", "messages": [{"role": "user", "content": "x"}], "max_tokens": 2,
            "mock": {"first_delay_ms": 1500}}
    async with aiohttp.ClientSession() as s:
        with pytest.raises(asyncio.TimeoutError):
            async with s.post(gateway.url + "/v1/chat/completions", json=body, headers=AUTH,
                              timeout=aiohttp.ClientTimeout(total=0.3)):
                pass
    await asyncio.sleep(2)
    after = upstream_stats(upstream)
    # The upstream saw the request but never completed it: the gateway dropped it when the client left.
    assert after["requests"] == before["requests"] + 1
    assert after["completed"] == before["completed"]


@pytest.fixture(scope="module")
def failover_gateway(workdir, upstream):
    dead = f"http://127.0.0.1:{free_port()}"
    broken = start_mock_upstream(workdir, fail=503)
    config = gateway_config({"small": [dead, broken.url, upstream.url]})
    config["pools"]["small"]["max_attempts"] = 3
    gw = start_gateway(workdir, config)
    yield gw
    gw.stop()
    broken.stop()


def test_failover_before_first_byte_no_client_error(failover_gateway):
    client = openai.OpenAI(base_url=failover_gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    for i in range(12):
        if i % 2:
            r = client.chat.completions.create(model="small", messages=[{"role": "user", "content": "x"}],
                                               max_tokens=2)
            assert r.choices[0].message.content == "w0 w1"
        else:
            chunks = list(client.chat.completions.create(model="small", messages=[{"role": "user", "content": "x"}],
                                                         max_tokens=2, stream=True))
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "w0 w1"
