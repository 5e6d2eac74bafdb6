"""Every client-facing error: OpenAI's shape, the right status, the SDK's matching exception, no leaks."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import openai
import pytest

from tests.processes import ADMIN_KEY, TENANT_KEYS, gateway_config, start_gateway, start_mock_upstream
from tests.redis_server import free_port


def post(url: str, body: bytes | str | dict, key: str | None = TENANT_KEYS["acme"], headers: dict | None = None):
    data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": "application/json",
                                                                          **(headers or {})})
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def assert_openai_error(status, headers, raw, expected_status, param=None):
    assert status == expected_status, raw
    assert headers["Content-Type"].startswith("application/json")
    assert headers.get("x-request-id")
    body = json.loads(raw)
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"] and isinstance(body["error"]["type"], str)
    if param is not None:
        assert body["error"]["param"] == param
    text = raw.decode()
    assert "Traceback" not in text and "/work/" not in text and "sk-" not in text
    return body["error"]


CHAT = "/v1/chat/completions"
OK = {"model": "small", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}


@pytest.mark.parametrize("body,param", [
    (b"{not json", None),
    (b"", None),
    (b"[1, 2]", None),
    ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
    ({"model": "small"}, "messages"),
    ({"model": "small", "messages": []}, "messages"),
    ({"model": "small", "messages": "hello"}, "messages"),
    ({"model": "small", "messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role"),
    ({"model": "small", "messages": [{"role": "user", "content": 7}]}, "messages[0].content"),
    ({**OK, "max_tokens": "ten"}, "max_tokens"),
    ({**OK, "max_tokens": 0}, "max_tokens"),
    ({**OK, "n": 100}, "n"),
    ({**OK, "stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({**OK, "stop": 5}, "stop"),
    ({**OK, "temperature": 9}, "temperature"),
    ({**OK, "stream": "yes"}, "stream"),
    ({**OK, "stream_options": {"include_usage": True}}, "stream_options"),
    ({**OK, "max_tokens": 5, "max_completion_tokens": 6}, "max_completion_tokens"),
    ({**OK, "user": 12}, "user"),
])
def test_bad_request_400(gateway, body, param):
    status, headers, raw = post(gateway.url + CHAT, body)
    err = assert_openai_error(status, headers, raw, 400, param)
    assert err["type"] == "invalid_request_error"


def test_completions_bad_prompt_400(gateway):
    status, headers, raw = post(gateway.url + "/v1/completions", {"model": "small", "prompt": {"a": 1}})
    assert_openai_error(status, headers, raw, 400, "prompt")


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_body_not_in_its_content_encoding_is_a_400(gateway, encoding):
    status, headers, raw = post(gateway.url + CHAT, OK, headers={"Content-Encoding": encoding})
    assert assert_openai_error(status, headers, raw, 400)["code"] == "unreadable_body"


def test_body_too_large_413(gateway):
    big = {**OK, "messages": [{"role": "user", "content": "x" * 70000}]}
    status, headers, raw = post(gateway.url + CHAT, big)
    assert_openai_error(status, headers, raw, 413)


@pytest.mark.parametrize("key,code", [(None, "missing_api_key"), ("sk-wrong", "invalid_api_key")])
def test_auth_401(gateway, key, code):
    status, headers, raw = post(gateway.url + CHAT, OK, key=key)
    assert assert_openai_error(status, headers, raw, 401)["code"] == code


def test_unknown_and_forbidden_model_404(gateway):
    status, headers, raw = post(gateway.url + CHAT, {**OK, "model": "gpt-9"})
    assert assert_openai_error(status, headers, raw, 404, "model")["code"] == "model_not_found"
    # globex may not use `other`: the answer is the same as for a model that does not exist.
    status, headers, raw = post(gateway.url + CHAT, {**OK, "model": "other"}, key=TENANT_KEYS["globex"])
    assert assert_openai_error(status, headers, raw, 404, "model")["code"] == "model_not_found"


def test_unknown_route_and_method(gateway):
    status, headers, raw = post(gateway.url + "/v1/nope", OK)
    assert_openai_error(status, headers, raw, 404)
    req = urllib.request.Request(gateway.url + CHAT, method="GET")
    try:
        urllib.request.urlopen(req, timeout=5)
    except urllib.error.HTTPError as exc:
        assert_openai_error(exc.code, dict(exc.headers), exc.read(), 405)


def test_sdk_exception_classes(gateway):
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="small", messages=[])
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=gateway.url + "/v1", api_key="sk-bad", max_retries=0).chat.completions.create(
            model="small", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(model="small", messages=[{"role": "user", "content": "x" * 70000}])
    assert info.value.status_code == 413


def test_admin_endpoint_needs_admin_key(gateway):
    status, headers, raw = post(gateway.url + "/admin/policy/reload", b"", key=None)
    assert_openai_error(status, headers, raw, 401)
    status, headers, raw = post(gateway.url + "/admin/policy/reload", b"", key=TENANT_KEYS["acme"])
    assert_openai_error(status, headers, raw, 403)
    status, _, raw = post(gateway.url + "/admin/policy/reload", b"", key=ADMIN_KEY)
    assert status == 200 and json.loads(raw)["reloaded"] is True


@pytest.fixture(scope="module")
def failing_gateway(workdir):
    """Pools whose upstreams are down (nothing listening), erroring (500) or slow (first-token timeout)."""
    broken = start_mock_upstream(workdir, fail=500)
    slow = start_mock_upstream(workdir)
    dead_url = f"http://127.0.0.1:{free_port()}"
    config = gateway_config({"dead": [dead_url], "broken": [broken.url], "slow": [slow.url]})
    config["pools"]["slow"]["timeouts"] = {"first_token": 1, "total": 2}
    gw = start_gateway(workdir, config)
    yield gw
    gw.stop()
    broken.stop()
    slow.stop()


@pytest.mark.parametrize("model,status,sdk_error", [
    ("dead", 503, openai.InternalServerError),
    ("broken", 502, openai.InternalServerError),
    ("slow", 504, openai.InternalServerError),
])
def test_upstream_failures_map_to_5xx(failing_gateway, model, status, sdk_error):
    body = {**OK, "model": model, "mock": {"first_delay_ms": 5000}}
    got, headers, raw = post(failing_gateway.url + CHAT, body)
    assert_openai_error(got, headers, raw, status)
    client = openai.OpenAI(base_url=failing_gateway.url + "/v1", api_key=TENANT_KEYS["acme"], max_retries=0)
    with pytest.raises(sdk_error):
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "x"}],
                                       extra_body={"mock": {"first_delay_ms": 5000}}, stream=True)


def test_policy_check_cli_names_file_line_field(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text("pools:\n  p:\n    members:\n      - url: ftp://nowhere\n"
                   "models:\n  m: {pool: p}\n"
                   "tenants:\n  t:\n    keys: [{sha256: 'abc'}]\n    models: [m]\n"
                   "    routing: {rules: [{pool: nope}]}\n")
    out = subprocess.run([sys.executable, "-m", "gateway.cli", "policy", "check", str(bad),
                          "policies/examples/gateway.yaml"], capture_output=True, text=True)
    assert out.returncode == 1
    assert f"{bad}:4: pools.p.members[0].url:" in out.stdout
    assert f"{bad}:9: tenants.t.keys[0].sha256:" in out.stdout
    assert "policies/examples/gateway.yaml: ok" in out.stdout
    bad.write_text(bad.read_text().replace("ftp://nowhere", "http://h/v1").replace("'abc'", "'" + "a" * 64 + "'"))
    out = subprocess.run([sys.executable, "-m", "gateway.cli", "policy", "check", str(bad)],
                         capture_output=True, text=True)
    assert out.returncode == 1 and f"{bad}:11: tenants.t.routing.rules[0].pool: unknown pool 'nope'" in out.stdout
