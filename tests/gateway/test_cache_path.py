"""The cache through the real gateway: hits skip the upstream, come back in the shape asked for, never
cross tenants, and failed streams are never stored."""

from __future__ import annotations

import contextlib
import http.client
import json
import time
import urllib.parse
import urllib.request

import openai
import pytest

from cache import directives
from tests.processes import TENANT_KEYS, upstream_stats


def _client(gw, tenant="acme"):
    return openai.OpenAI(base_url=gw.url + "/v1", api_key=TENANT_KEYS[tenant], max_retries=0)


def _eventually_hit(call, timeout=30.0):
    """Stores run after the answer is sent (and the encoder loads in the background at start)."""
    deadline = time.monotonic() + timeout
    while True:
        raw = call()
        if raw.headers["x-switchyard-cache"].startswith("hit") or time.monotonic() > deadline:
            return raw
        time.sleep(0.2)


def test_exact_hit_skips_upstream_and_is_tenant_scoped(gateway, upstream):
    msgs = [{"role": "user", "content": "What is the boiling point of water at sea level?"}]
    call = lambda tenant="acme": _client(gateway, tenant).chat.completions.with_raw_response.create(  # noqa: E731
        model="small", messages=msgs, max_tokens=4, temperature=0)
    first = call()
    assert first.headers["x-switchyard-cache"] == "miss"
    hit = _eventually_hit(call)
    assert hit.headers["x-switchyard-cache"] == "hit-exact"
    assert hit.headers["x-switchyard-cache-entry"]
    before = upstream_stats(upstream)["requests"]
    again = call()
    assert again.headers["x-switchyard-cache"] == "hit-exact"
    assert upstream_stats(upstream)["requests"] == before  # answered without the upstream
    assert again.parse().choices[0].message.content == first.parse().choices[0].message.content
    # Same request from another tenant: never the first tenant's entry.
    other = call("globex")
    assert other.headers["x-switchyard-cache"] == "miss"


def test_streamed_hit_is_a_valid_sdk_stream(gateway):
    msgs = [{"role": "user", "content": "Name the largest planet in the solar system."}]
    client = _client(gateway)

    def call():
        return client.chat.completions.with_raw_response.create(
            model="small", messages=msgs, max_tokens=5, seed=7, stream=True,
            stream_options={"include_usage": True})

    first = call()
    text = "".join(c.choices[0].delta.content or "" for c in first.parse() if c.choices)
    hit = _eventually_hit(call)
    assert hit.headers["x-switchyard-cache"] == "hit-exact"
    chunks = list(hit.parse())
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
    assert [c for c in chunks if c.choices][-1].choices[0].finish_reason == "length"
    assert chunks[-1].usage.completion_tokens == 5


@pytest.mark.parametrize("stream", [False, True])
def test_a_hit_replays_the_answers_system_fingerprint(gateway, stream):
    """The backend configuration that made the answer (OpenAI's `system_fingerprint`) comes back with
    every hit, on the body or on every chunk, as the upstream sent it."""
    msgs = [{"role": "user", "content": f"Which gas do plants take in? (stream={stream})"}]
    client = _client(gateway)

    def call():
        return client.chat.completions.with_raw_response.create(
            model="small", messages=msgs, max_tokens=4, temperature=0, stream=stream,
            extra_body={"mock": {"system_fingerprint": "fp_3b2a1c"}})

    def fingerprints(raw):
        if not stream:
            return [raw.parse().system_fingerprint]
        return [chunk.system_fingerprint for chunk in raw.parse()]

    assert set(fingerprints(call())) == {"fp_3b2a1c"}
    hit = _eventually_hit(call)
    assert hit.headers["x-switchyard-cache"] == "hit-exact"
    assert set(fingerprints(hit)) == {"fp_3b2a1c"}


def test_failed_stream_is_not_cached(gateway):
    body = dict(model="small", messages=[{"role": "user", "content": "Tell me about rivers."}], max_tokens=8,
                temperature=0, stream=True, extra_body={"mock": {"die_after": 2}})
    client = _client(gateway)
    for attempt in range(2):
        raw = client.chat.completions.with_raw_response.create(**body)
        # Had the first, broken answer been stored, the identical second request would be a hit.
        assert raw.headers["x-switchyard-cache"] == "miss", attempt
        with pytest.raises(openai.APIError):
            for _ in raw.parse():
                pass
        time.sleep(0.5)


def test_nondeterministic_requests_bypass(gateway):
    raw = _client(gateway).chat.completions.with_raw_response.create(
        model="small", messages=[{"role": "user", "content": "hi"}], max_tokens=2, temperature=0.8)
    assert raw.headers["x-switchyard-cache"] == "bypass"


def test_tool_calls_are_never_stored_as_an_empty_answer(gateway, upstream):
    # With tool_choice naming the function, OpenAI answers the call with finish_reason "stop".
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    for stream in (False, True):
        body = dict(model="small", messages=[{"role": "user", "content": f"Weather in Paris? {stream}"}],
                    max_tokens=8, temperature=0, tools=tools, stream=stream,
                    tool_choice={"type": "function", "function": {"name": "weather"}},
                    extra_body={"mock": {"tool_call": "weather"}})
        client = _client(gateway)
        first = client.chat.completions.with_raw_response.create(**body)
        assert first.headers["x-switchyard-cache"] == "miss"
        time.sleep(1.0)  # a store, had there been one, lands after the answer
        again = client.chat.completions.with_raw_response.create(**body)
        assert again.headers["x-switchyard-cache"] == "miss"  # asked the upstream again, got the call
        if stream:
            calls = [c.choices[0].delta.tool_calls for c in again.parse() if c.choices and c.choices[0].delta.tool_calls]
            assert calls and calls[0][0].function.name == "weather"
        else:
            assert again.parse().choices[0].message.tool_calls[0].function.name == "weather"


def test_a_tenant_with_the_cache_off_is_told_bypass(workdir, upstream):
    from tests.processes import gateway_config, start_gateway

    config = gateway_config({"small": [upstream.url]}, globex={"cache": {"enabled": False}})
    own = workdir / "cache-off"  # its own config file: the module's gateway watches the shared one
    own.mkdir(exist_ok=True)
    proc = start_gateway(own, config)
    try:
        raw = _client(proc, "globex").chat.completions.with_raw_response.create(
            model="small", messages=[{"role": "user", "content": "hi"}], max_tokens=2, temperature=0)
        assert raw.headers["x-switchyard-cache"] == "bypass"
    finally:
        proc.stop()


def test_trailing_whitespace_of_a_completion_prompt_is_another_request(gateway):
    client = _client(gateway)
    call = lambda prompt: client.completions.with_raw_response.create(  # noqa: E731
        model="small", prompt=prompt, max_tokens=3, temperature=0, echo=True)
    _eventually_hit(lambda: call("The capital of France is"))
    # A trailing space is tokenised, so it continues differently; with echo the answer repeats the prompt.
    spaced = call("The capital of France is ")
    assert spaced.headers["x-switchyard-cache"] == "miss"  # neither exact (as sent) nor semantic (echo)


@contextlib.contextmanager
def _own_gateway(workdir, name: str, config: dict):
    """A gateway with its own config file (the module's gateway watches the shared one)."""
    from tests.processes import start_gateway

    own = workdir / name
    own.mkdir(exist_ok=True)
    proc = start_gateway(own, config)
    try:
        yield proc, own / "gateway.yaml"
    finally:
        proc.stop()


def test_a_streamed_refusal_that_would_have_escalated_is_not_cached(workdir, upstream):
    from tests.processes import gateway_config

    routing = {"explicit_models": "route", "cascade": {"ladder": ["small", "large"]}}
    config = gateway_config({"small": [upstream.url], "large": [upstream.url]}, acme={"routing": routing})
    with _own_gateway(workdir, "refusals", config) as (gw, _):
        client = _client(gw)
        body = dict(model="small", messages=[{"role": "user", "content": "Explain how tides work."}], max_tokens=8,
                    temperature=0, extra_body={"mock": {"refuse_as": "small"}})
        streamed = client.chat.completions.with_raw_response.create(stream=True, **body)
        assert streamed.headers["x-switchyard-route"] == "small"  # a stream cannot escalate
        assert "sorry" in "".join(c.choices[0].delta.content or "" for c in streamed.parse() if c.choices)
        time.sleep(1.0)  # a store, had there been one, lands after the answer
        plain = client.chat.completions.with_raw_response.create(**body)
        assert plain.headers["x-switchyard-cache"] == "miss" and plain.headers["x-switchyard-route"] == "large"


def test_a_route_override_bypasses_the_cache(workdir, upstream):
    from tests.processes import gateway_config

    config = gateway_config({"small": [upstream.url], "large": [upstream.url]},
                            acme={"routing": {"allow_header_override": True}})
    with _own_gateway(workdir, "override", config) as (gw, _):
        msgs = [{"role": "user", "content": "Name a prime number."}]
        call = lambda tenant, **kw: _client(gw, tenant).chat.completions.with_raw_response.create(  # noqa: E731
            model="small", messages=msgs, max_tokens=4, temperature=0, **kw)
        _eventually_hit(lambda: call("globex"))
        forced = call("acme", extra_headers={"x-switchyard-route": "large"})
        assert forced.headers["x-switchyard-cache"] == "bypass" and forced.headers["x-switchyard-route"] == "large"
        with pytest.raises(openai.PermissionDeniedError):  # globex may not override, cached answer or not
            call("globex", extra_headers={"x-switchyard-route": "large"})


def test_an_answer_made_under_one_budget_is_not_served_under_another(workdir, upstream):
    from tests.processes import gateway_config, write_config

    config = gateway_config({"small": [upstream.url]}, acme={"budgets": {"max_output_tokens": 3}})
    with _own_gateway(workdir, "budgets", config) as (gw, path):
        call = lambda: _client(gw).chat.completions.with_raw_response.create(  # noqa: E731
            model="small", messages=[{"role": "user", "content": "Tell me about rivers."}], max_tokens=20,
            temperature=0)
        clamped = _eventually_hit(call)
        assert clamped.parse().choices[0].finish_reason == "length"
        write_config(path, gateway_config({"small": [upstream.url]}, acme={"budgets": {"max_output_tokens": 64}}))
        deadline = time.monotonic() + 20
        while (raw := call()).headers["x-switchyard-cache"] != "miss":  # until the reload applies
            assert time.monotonic() < deadline, "the clamped answer was still served after the reload"
            time.sleep(0.3)
        assert raw.parse().usage.completion_tokens == 20


def test_completion_logprobs_zero_bypasses(gateway):
    raw = _client(gateway).completions.with_raw_response.create(
        model="small", prompt="Count to three:", max_tokens=3, temperature=0, logprobs=0)
    assert raw.headers["x-switchyard-cache"] == "bypass"


def test_whitespace_around_a_prompt_is_not_matched_semantically(gateway):
    client = _client(gateway)
    call = lambda prompt: client.completions.with_raw_response.create(  # noqa: E731
        model="small", prompt=prompt, max_tokens=3, temperature=0)
    _eventually_hit(lambda: call("The tallest mountain on Earth is"))
    assert call("The tallest mountain on Earth is ").headers["x-switchyard-cache"] == "miss"


def test_a_semantic_hit_reports_its_own_prompt_tokens(gateway):
    from policies.tokens import ESTIMATE, count_request

    client = _client(gateway)
    asked = dict(model="small", max_tokens=4, temperature=0,
                 messages=[{"role": "user", "content": "What is the capital of Australia?"}])
    original = client.chat.completions.with_raw_response.create(**asked)
    _eventually_hit(lambda: client.chat.completions.with_raw_response.create(**asked))  # stored
    reworded = {**asked, "messages": [{"role": "user", "content": "Which city is Australia's capital?"}]}
    hit = client.chat.completions.with_raw_response.create(**reworded)
    assert hit.headers["x-switchyard-cache"] == "hit-semantic"
    usage = hit.parse().usage
    # The answer's tokens are the cached answer's; the prompt is this request's (counted as budgets count it)
    assert usage.completion_tokens == original.parse().usage.completion_tokens
    assert usage.prompt_tokens == count_request("chat", reworded, ESTIMATE)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def _ask(gw, content, control=None, tenant="acme"):
    headers = {directives.HEADER: control} if control is not None else None
    return _client(gw, tenant).chat.completions.with_raw_response.create(
        model="small", messages=[{"role": "user", "content": content}], max_tokens=4, temperature=0,
        extra_headers=headers)


def _cached_entry(gw, content) -> str:
    """Ask until the answer is stored; the entry that answers it now."""
    hit = _eventually_hit(lambda: _ask(gw, content))
    assert hit.headers["x-switchyard-cache"] == "hit-exact"
    return hit.headers["x-switchyard-cache-entry"]


def _eventually_new_entry(gw, content, old: str, timeout=30.0) -> str:
    """The stored answer replaced `old` (stores land after the response)."""
    deadline = time.monotonic() + timeout
    while True:
        raw = _ask(gw, content)
        entry = raw.headers.get("x-switchyard-cache-entry")
        if (entry and entry != old) or time.monotonic() > deadline:
            return entry
        time.sleep(0.2)


def test_no_cache_asks_the_upstream_and_refreshes_the_entry(gateway, upstream):
    content = "Which gas do plants take in for photosynthesis?"
    _ask(gateway, content)
    old = _cached_entry(gateway, content)
    before = upstream_stats(upstream)["requests"]
    fresh = _ask(gateway, content, "no-cache")
    assert fresh.headers["x-switchyard-cache"] == "miss"
    assert upstream_stats(upstream)["requests"] == before + 1
    new = _eventually_new_entry(gateway, content, old)
    assert new is not None and new != old  # the fresh answer took the old one's place


def test_no_store_is_served_from_the_cache_but_leaves_nothing(gateway):
    content = "How many strings does a standard violin have?"
    first = _ask(gateway, content, "no-store")
    assert first.headers["x-switchyard-cache"] == "miss"
    time.sleep(1.0)  # a store, had there been one, lands after the answer
    assert _ask(gateway, content, "no-store").headers["x-switchyard-cache"] == "miss"
    _ask(gateway, content)
    entry = _cached_entry(gateway, content)
    again = _ask(gateway, content, "no-store")
    assert (again.headers["x-switchyard-cache"], again.headers["x-switchyard-cache-entry"]) == ("hit-exact", entry)


def test_max_age_serves_only_a_young_enough_answer(gateway, upstream):
    content = "What is the chemical symbol for sodium?"
    _ask(gateway, content)
    old = _cached_entry(gateway, content)
    young = _ask(gateway, content, "max-age=3600")
    assert young.headers["x-switchyard-cache"] == "hit-exact" and 0 <= int(young.headers["age"]) < 3600
    time.sleep(2.1)
    before = upstream_stats(upstream)["requests"]
    too_old = _ask(gateway, content, "Max-Age=1, x-unknown-directive")
    assert too_old.headers["x-switchyard-cache"] == "miss" and "age" not in too_old.headers
    assert upstream_stats(upstream)["requests"] == before + 1
    assert _eventually_new_entry(gateway, content, old) != old


def test_only_if_cached_never_reaches_a_backend(gateway, upstream):
    content = "Which planet has the most moons?"
    before = upstream_stats(upstream)["requests"]
    with pytest.raises(openai.APIStatusError) as info:
        _ask(gateway, content, "only-if-cached")
    error = info.value
    assert error.status_code == 504 and error.response.headers["x-should-retry"] == "false"
    assert error.body["code"] == "not_cached" and error.body["type"] == "invalid_request_error"
    assert error.response.headers["x-switchyard-cache"] == "miss"
    assert upstream_stats(upstream)["requests"] == before
    _ask(gateway, content)
    entry = _cached_entry(gateway, content)
    cached = _ask(gateway, content, "only-if-cached")
    assert cached.headers["x-switchyard-cache-entry"] == entry
    # Not cacheable at all (temperature > 0): still a 504, not an upstream call.
    with pytest.raises(openai.APIStatusError) as info:
        _client(gateway).chat.completions.create(
            model="small", messages=[{"role": "user", "content": content}], max_tokens=4, temperature=0.9,
            extra_headers={directives.HEADER: "only-if-cached"})
    assert info.value.status_code == 504 and upstream_stats(upstream)["requests"] == before + 1


def test_a_directive_on_a_second_header_line_counts(gateway, upstream):
    """Two `x-switchyard-cache-control` lines are one list: a second line's only-if-cached still holds."""
    before = upstream_stats(upstream)["requests"]
    body = json.dumps({"model": "small", "messages": [{"role": "user", "content": "Which ocean is the deepest?"}],
                       "max_tokens": 4, "temperature": 0}).encode()
    url = urllib.parse.urlsplit(gateway.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.putrequest("POST", "/v1/chat/completions")
    for name, value in (("authorization", "Bearer " + TENANT_KEYS["acme"]), ("content-type", "application/json"),
                        ("content-length", str(len(body))), (directives.HEADER, "no-store"),
                        (directives.HEADER, "only-if-cached")):
        conn.putheader(name, value)
    conn.endheaders(body)
    response = conn.getresponse()
    assert response.status == 504 and json.loads(response.read())["error"]["code"] == "not_cached"
    conn.close()
    assert upstream_stats(upstream)["requests"] == before


@pytest.mark.parametrize("control", ["max-age=soon", "max-age=-5", "max-age=", "max-age=1.5", "no-cache, max-age=12s"])
def test_a_malformed_cache_control_is_a_clear_400(gateway, upstream, control):
    before = upstream_stats(upstream)["requests"]
    with pytest.raises(openai.BadRequestError) as info:
        _ask(gateway, "What is the tallest mountain in Africa?", control)
    body = info.value.body
    assert body["code"] == "invalid_cache_control" and body["param"] == directives.HEADER
    assert "max-age must be a whole number of seconds" in body["message"]
    assert upstream_stats(upstream)["requests"] == before
