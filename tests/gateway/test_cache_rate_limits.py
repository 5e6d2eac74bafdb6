"""Cache hits and rate limits through the real gateway: a hit is a request (it takes from
requests/min and gets its x-ratelimit-* headers, and a tenant over its limit gets a 429 even for an
answer the cache holds), but it uses no backend, so an exhausted tokens/min does not hold it back."""

from __future__ import annotations

import time

import openai
import pytest

from tests.processes import ADMIN_KEY, TENANT_KEYS, gateway_config, get_json, start_gateway, upstream_stats

CACHED = [{"role": "user", "content": "What is the boiling point of water at sea level?"}]
LONGER = [{"role": "user", "content": "Describe, step by step and in some detail, how a refrigerator keeps "
                                      "its inside cold while the kitchen around it stays warm."}]


@pytest.fixture(scope="module")
def limited_gateway(workdir, upstream):
    config = gateway_config({"small": [upstream.url]},
                            acme={"limits": {"requests_per_minute": 3, "tokens_per_minute": 60}})
    proc = start_gateway(workdir, config)
    yield proc
    proc.stop()


def _models_loaded(gw, timeout: float = 120.0) -> None:
    """Wait until the encoder is up, so that an answer is stored the moment it is sent: the test must
    run well inside a minute, before the buckets refill."""
    deadline = time.monotonic() + timeout
    while not get_json(gw.url + "/readyz")["models"]["loaded"]:
        assert time.monotonic() < deadline, "the encoder never loaded"
        time.sleep(0.2)


def _stored(gw, timeout: float = 30.0) -> None:
    """Wait, through the admin API (not a tenant request), until the answer has been stored."""
    deadline = time.monotonic() + timeout
    while get_json(gw.url + "/admin/cache/acme/stats", ADMIN_KEY)["entries"] < 1:
        assert time.monotonic() < deadline, "the answer was never stored"
        time.sleep(0.1)


def test_a_hit_takes_a_request_but_no_tokens(limited_gateway, upstream):
    client = openai.OpenAI(base_url=limited_gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)

    def call(messages, max_tokens):
        return client.chat.completions.with_raw_response.create(model="small", messages=messages,
                                                                max_tokens=max_tokens, temperature=0)

    _models_loaded(limited_gateway)
    first = call(CACHED, 8)  # request 1 of 3; its reservation leaves too few tokens for LONGER
    assert first.headers["x-switchyard-cache"] == "miss"
    _stored(limited_gateway)
    with pytest.raises(openai.RateLimitError) as info:  # a miss needs tokens: refused, takes no request
        call(LONGER, 40)
    assert "token" in info.value.body["message"].lower()

    upstream_before = upstream_stats(upstream)["requests"]
    for left in ("1", "0"):  # requests 2 and 3: hits, served although tokens/min is spent
        hit = call(CACHED, 8)
        assert hit.headers["x-switchyard-cache"] == "hit-exact"
        assert hit.headers["x-ratelimit-remaining-requests"] == left
    with pytest.raises(openai.RateLimitError) as info:  # request 4: over requests/min, cached or not
        call(CACHED, 8)
    assert info.value.body["code"] == "rate_limit_exceeded"
    assert int(info.value.response.headers["retry-after"]) >= 1
    assert upstream_stats(upstream)["requests"] == upstream_before
