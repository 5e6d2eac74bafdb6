"""The official openai SDK, sync and async, against the real gateway in front of a real upstream."""

from __future__ import annotations

import openai
import pytest

from tests.processes import TENANT_KEYS


@pytest.fixture
def client(gateway):
    return openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)


@pytest.fixture
def aclient(gateway):
    return openai.AsyncOpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)


def test_chat_non_streaming_with_usage(client):
    resp = client.chat.completions.create(model="small", messages=[{"role": "user", "content": "hello there"}],
                                          max_tokens=5)
    assert resp.object == "chat.completion"
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].message.content == "w0 w1 w2 w3 w4"
    assert resp.choices[0].finish_reason == "length"
    assert resp.usage.completion_tokens == 5 and resp.usage.prompt_tokens > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + 5


def test_chat_streaming_role_first_finish_last_and_usage(client):
    stream = client.chat.completions.create(model="small", messages=[{"role": "user", "content": "hi"}],
                                            max_tokens=4, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    content_chunks = [c for c in chunks if c.choices]
    assert content_chunks[-1].choices[0].finish_reason == "length"
    assert all(c.choices[0].finish_reason is None for c in content_chunks[:-1])
    assert "".join(c.choices[0].delta.content or "" for c in content_chunks) == "w0 w1 w2 w3"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 4


def test_streaming_without_include_usage_has_no_usage_chunk(client):
    stream = client.chat.completions.create(model="small", messages=[{"role": "user", "content": "hi"}],
                                            max_tokens=3, stream=True)
    chunks = list(stream)
    assert all(c.choices for c in chunks), "the usage-only chunk must not reach a client that did not ask"
    assert chunks[-1].choices[0].finish_reason == "length"


def test_stop_sequence_honoured(client):
    resp = client.chat.completions.create(model="small", messages=[{"role": "user", "content": "x"}],
                                          max_tokens=10, stop=[" w3"])
    assert resp.choices[0].message.content == "w0 w1 w2"
    assert resp.choices[0].finish_reason == "stop"


def test_max_completion_tokens_and_budget_clamp(client):
    raw = client.chat.completions.with_raw_response.create(
        model="small", messages=[{"role": "user", "content": "x"}], max_completion_tokens=1000)
    assert raw.headers["x-switchyard-max-tokens-clamped"] == "64"
    assert raw.parse().usage.completion_tokens == 64


def test_legacy_completions_both_ways(client):
    resp = client.completions.create(model="small", prompt="once upon a time", max_tokens=3)
    assert resp.object == "text_completion" and resp.choices[0].text == "w0 w1 w2"
    text = "".join(c.choices[0].text for c in client.completions.create(
        model="small", prompt="once", max_tokens=3, stream=True) if c.choices)
    assert text == "w0 w1 w2"


def test_models_endpoint_lists_only_allowed(gateway):
    acme = openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"])
    globex = openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["globex"])
    assert sorted(m.id for m in acme.models.list()) == ["other", "small"]
    assert [m.id for m in globex.models.list()] == ["small"]
    assert acme.models.retrieve("other").id == "other"
    with pytest.raises(openai.NotFoundError):
        globex.models.retrieve("other")


def test_request_id_echoed_and_generated(client):
    raw = client.chat.completions.with_raw_response.create(
        model="small", messages=[{"role": "user", "content": "x"}], max_tokens=1,
        extra_headers={"x-request-id": "trace-123"})
    assert raw.headers["x-request-id"] == "trace-123"
    raw = client.chat.completions.with_raw_response.create(
        model="small", messages=[{"role": "user", "content": "x"}], max_tokens=1)
    assert len(raw.headers["x-request-id"]) == 32
    assert raw.headers["x-switchyard-route"] == "small"


async def test_async_client_both_ways(aclient):
    resp = await aclient.chat.completions.create(model="small", messages=[{"role": "user", "content": "a"}],
                                                 max_tokens=2)
    assert resp.choices[0].message.content == "w0 w1"
    stream = await aclient.chat.completions.create(model="small", messages=[{"role": "user", "content": "a"}],
                                                   max_tokens=2, stream=True,
                                                   stream_options={"include_usage": True})
    chunks = [c async for c in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "w0 w1"
    assert chunks[-1].usage.total_tokens > 0
    comp = await aclient.completions.create(model="small", prompt="p", max_tokens=2)
    assert comp.choices[0].text == "w0 w1"
