"""Tenant policy through the real gateway: rate limits, token budgets, routing by class, escalation."""

from __future__ import annotations

import openai
import pytest

from tests.processes import TENANT_KEYS, gateway_config, start_gateway, start_mock_upstream
from tests.redis_server import free_port


@pytest.fixture(scope="module")
def upstreams(workdir):
    procs = {name: start_mock_upstream(workdir, model=f"served-by-{name}") for name in
             ("simple", "complex", "code", "math")}
    yield procs
    for p in procs.values():
        p.stop()


@pytest.fixture(scope="module")
def policy_gateway(workdir, upstreams):
    dead = f"http://127.0.0.1:{free_port()}"
    pools = {name: [p.url] for name, p in upstreams.items()}
    pools["dead"] = [dead]
    config = gateway_config(pools)
    config["models"]["auto"] = {"pool": "complex"}
    config["tenants"]["acme"].update({
        "limits": {"requests_per_minute": 1000},
        "budgets": {"max_input_tokens": 200, "max_output_tokens": 32},
        "routing": {
            "rules": [{"when": {"classes": [c]}, "pool": c} for c in ("simple", "code", "math")]
                     + [{"when": {"models": ["dead"]}, "pool": "dead", "escalate_to": ["complex"]}],
            "default_pool": "complex",
            "allow_header_override": True,
        },
    })
    config["tenants"]["globex"].update({"models": ["*"], "limits": {"requests_per_minute": 3}})
    gw = start_gateway(workdir, config)
    yield gw
    gw.stop()


def _client(gw, tenant="acme"):
    return openai.OpenAI(base_url=gw.url + "/v1", api_key=TENANT_KEYS[tenant], max_retries=0)


def test_requests_per_minute_429_with_headers(policy_gateway):
    client = _client(policy_gateway, "globex")
    for _ in range(3):
        raw = client.chat.completions.with_raw_response.create(
            model="simple", messages=[{"role": "user", "content": "x"}], max_tokens=1)
        assert raw.headers["x-ratelimit-limit-requests"] == "3"
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="simple", messages=[{"role": "user", "content": "x"}], max_tokens=1)
    resp = info.value.response
    assert int(resp.headers["retry-after"]) >= 1
    assert resp.headers["x-ratelimit-remaining-requests"] == "0"
    assert info.value.body["code"] == "rate_limit_exceeded"


def test_input_budget_rejects_with_the_numbers(policy_gateway):
    with pytest.raises(openai.BadRequestError) as info:
        _client(policy_gateway).chat.completions.create(
            model="simple", messages=[{"role": "user", "content": "word " * 400}], max_tokens=1)
    message = info.value.body["message"]
    assert "max_input_tokens=200" in message and info.value.body["code"] == "input_budget_exceeded"


@pytest.mark.parametrize("prompt,label", [
    ("What time does your store open on Sundays?", "simple"),
    ("Write a Python function that merges two sorted lists and explain its complexity.", "code"),
    ("A train leaves at 3pm going 60 km/h; another leaves an hour later at 80 km/h. When does it catch up?", "math"),
    ("Draft a detailed launch plan and announcement email for our new analytics product, "
     "covering audience, messaging, timeline and risks.", "complex"),
])
def test_auto_routes_each_class_to_its_pool(policy_gateway, prompt, label):
    raw = _client(policy_gateway).chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": prompt}], max_tokens=2)
    assert raw.headers["x-switchyard-class"] == label
    assert raw.headers["x-switchyard-route"] == label
    assert raw.parse().model == f"served-by-{label}"


def test_failed_pool_escalates_without_client_error(policy_gateway):
    raw = _client(policy_gateway).chat.completions.with_raw_response.create(
        model="dead", messages=[{"role": "user", "content": "hello"}], max_tokens=2)
    assert raw.headers["x-switchyard-route"] == "complex"
    assert raw.parse().choices[0].message.content == "w0 w1"


def test_header_override_allowed_and_refused(policy_gateway):
    raw = _client(policy_gateway).chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": "What time do you open?"}], max_tokens=1,
        extra_headers={"x-switchyard-route": "math"})
    assert raw.headers["x-switchyard-route"] == "math"
    with pytest.raises(openai.PermissionDeniedError):
        _client(policy_gateway, "globex").chat.completions.create(
            model="simple", messages=[{"role": "user", "content": "x"}], max_tokens=1,
            extra_headers={"x-switchyard-route": "math"})
