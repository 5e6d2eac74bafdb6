"""Metrics and the per-request log line: what operators read, and what must never appear there."""

from __future__ import annotations

import json
import time
import urllib.request

import openai

from tests.processes import TENANT_KEYS


def _request_lines(gateway, request_id: str) -> list[dict]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [json.loads(l) for l in gateway.log_text().splitlines() if l.startswith("{")]
        found = [l for l in lines if l.get("event") == "request" and l.get("request_id") == request_id]
        if found:
            return found
        time.sleep(0.05)
    return []


def test_one_log_line_per_request_without_key_or_prompt(gateway):
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    secret_prompt = "my secret prompt text 4242"
    list(client.chat.completions.create(model="small", messages=[{"role": "user", "content": secret_prompt}],
                                        max_tokens=3, stream=True, stream_options={"include_usage": True},
                                        extra_headers={"x-request-id": "log-check-1"}))
    lines = _request_lines(gateway, "log-check-1")
    assert len(lines) == 1
    line = lines[0]
    for field in ("tenant", "model", "backend", "status", "prompt_tokens", "completion_tokens", "ttft_ms",
                  "ttlt_ms", "total_ms", "upstream_ms", "overhead_ms"):
        assert field in line, field
    assert line["tenant"] == "acme" and line["status"] == 200 and line["completion_tokens"] == 3
    assert line["upstream_ms"] <= line["total_ms"]
    text = gateway.log_text()
    assert TENANT_KEYS["acme"] not in text and secret_prompt not in text


def test_metrics_exposed(gateway):
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    client.chat.completions.create(model="small", messages=[{"role": "user", "content": "x"}], max_tokens=2)
    with urllib.request.urlopen(gateway.url + "/metrics", timeout=5) as resp:
        text = resp.read().decode()
    assert 'switchyard_requests_total{model="small",status="200",tenant="acme"}' in text
    for name in ("switchyard_ttft_seconds_bucket", "switchyard_ttlt_seconds_bucket", "switchyard_tokens_total",
                 "switchyard_in_flight_requests", "switchyard_gateway_overhead_seconds_bucket"):
        assert name in text, name
    assert 'switchyard_tokens_total{kind="completion",model="small",tenant="acme"}' in text


def test_health_and_readiness(gateway):
    with urllib.request.urlopen(gateway.url + "/healthz", timeout=5) as resp:
        assert json.loads(resp.read()) == {"status": "ok"}
    with urllib.request.urlopen(gateway.url + "/readyz", timeout=5) as resp:
        ready = json.loads(resp.read())
    assert ready["status"] == "ready" and "small" in ready["pools"]
