"""`switchyard serve` with no config: the embedded default answers from the bundled models, no network."""

from __future__ import annotations

import openai
import pytest

from tests.processes import start_gateway

KEY = "sk-embedded-test"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    gw = start_gateway(tmp_path_factory.mktemp("embedded"), None,
                       env={"SWITCHYARD_API_KEY": KEY, "SWITCHYARD_ADMIN_KEY": "sk-embedded-admin",
                            "HF_HUB_OFFLINE": "1"})
    yield gw
    gw.stop()


def test_models_listed(embedded):
    client = openai.OpenAI(base_url=embedded.url + "/v1", api_key=KEY, max_retries=0)
    assert sorted(m.id for m in client.models.list()) == ["auto", "large", "small"]


@pytest.mark.parametrize("model", ["large", "small"])
def test_chat_both_ways_from_bundled_models(embedded, model):
    client = openai.OpenAI(base_url=embedded.url + "/v1", api_key=KEY, max_retries=0)
    # Greedy here (a sampled first token may legitimately be end-of-sequence); the stream below samples.
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "def add(a, b):"}],
                                           max_tokens=12, temperature=0)
    assert reply.usage.completion_tokens >= 1 and reply.choices[0].message.content
    assert reply.choices[0].finish_reason in ("stop", "length")
    chunks = list(client.chat.completions.create(model=model, messages=[{"role": "user", "content": "import os"}],
                                                 max_tokens=12, temperature=0.7, seed=2, stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c for c in chunks if c.choices][-1].choices[0].finish_reason in ("stop", "length")
    assert chunks[-1].usage.completion_tokens >= 1


@pytest.mark.parametrize("model", ["large", "small"])
def test_without_max_tokens_the_default_cap_fits_the_models_context(embedded, model):
    """The README's examples set no max_tokens: the embedded default's output cap (512) is written in, and
    a bundled model with a 512-token context generates what fits instead of refusing the request."""
    client = openai.OpenAI(base_url=embedded.url + "/v1", api_key=KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "class Stack:"}], temperature=0)
    assert raw.headers["x-switchyard-max-tokens-clamped"] == "512"
    reply = raw.parse()
    assert reply.choices[0].finish_reason in ("stop", "length") and reply.usage.completion_tokens >= 1
    assert reply.usage.prompt_tokens + reply.usage.completion_tokens <= 512
    # greedy, as above: a sampled first token may be end-of-sequence (unseeded, it was, once in CI)
    chunks = list(client.chat.completions.create(model=model, messages=[{"role": "user", "content": "import os"}],
                                                 temperature=0, stream=True, stream_options={"include_usage": True}))
    assert [c for c in chunks if c.choices][-1].choices[0].finish_reason in ("stop", "length")
    assert chunks[-1].usage.completion_tokens >= 1
    assert chunks[-1].usage.prompt_tokens + chunks[-1].usage.completion_tokens <= 512


def test_auto_routes_and_says_where(embedded):
    client = openai.OpenAI(base_url=embedded.url + "/v1", api_key=KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": "Implement a binary search tree in Python with insert and delete."}],
        max_tokens=8, temperature=0.5)
    assert raw.headers["x-switchyard-class"] in ("simple", "complex", "code", "math")
    assert raw.headers["x-switchyard-route"] in ("small", "large")
    assert raw.parse().choices[0].finish_reason in ("stop", "length")


def test_legacy_completion_and_greedy_cache(embedded):
    client = openai.OpenAI(base_url=embedded.url + "/v1", api_key=KEY, max_retries=0)
    first = client.completions.with_raw_response.create(model="large", prompt="class Stack:", max_tokens=10,
                                                        temperature=0)
    assert first.parse().choices[0].text is not None
    assert first.headers["x-switchyard-cache"] in ("miss", "hit-exact")


def test_cached_answer_names_the_model_that_answered(embedded):
    """A hit for model "auto" reports the routed model the original answer came from, as the miss did."""
    import time

    client = openai.OpenAI(base_url=embedded.url + "/v1", api_key=KEY, max_retries=0)

    def call():
        return client.chat.completions.with_raw_response.create(
            model="auto", messages=[{"role": "user", "content": "Name three rivers in Europe."}],
            max_tokens=6, temperature=0)

    first = call()
    assert first.headers["x-switchyard-cache"] == "miss"
    deadline = time.monotonic() + 30  # the entry is stored after the answer is sent
    hit = call()
    while hit.headers["x-switchyard-cache"] != "hit-exact" and time.monotonic() < deadline:
        time.sleep(0.2)
        hit = call()
    assert hit.headers["x-switchyard-cache"] == "hit-exact"
    assert first.parse().model in ("small", "large")
    assert hit.parse().model == first.parse().model
    assert hit.parse().choices[0].message.content == first.parse().choices[0].message.content
