"""Property-based fuzzing of the cache admin API (cache/admin.py) against a real gateway process.

Schemathesis reads `cache/openapi_admin.yaml` and, for every operation, sends valid and invalid
requests (path parameters, query parameters, bodies) with the admin key over real HTTP. Every response
must: never be a 5xx; conform to the document (status, content type, body schema); be, when it is a
4xx, OpenAI's error shape `{"error": {"message", "type", "param", "code"}}`; never show anything
internal (a traceback, a Python object's repr, a key); and what the admin key may do, no key, an unknown
key (401) and a tenant key (403) may not. Hypothesis runs derandomized, so a CI run is repeatable.
A few edge cases the generators seldom reach are sent by hand under the same checks.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_schema_conformance,
    status_code_conformance,
)

from cache.admin import valid_tenant_id
from cache.entry import valid_entry_id
from tests.processes import ADMIN_KEY, TENANT_KEYS, gateway_config, start_gateway

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "cache" / "openapi_admin.yaml"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}

schema = schemathesis.openapi.from_path(SPEC)

SEEDED: dict[str, list[str]] = {}
"""The fuzz's own tenants → ids of their entries (filled by the `admin_gateway` fixture). The fuzz
deletes and flushes what it finds, so it gets tenants no other test reads, and the tests can run in
any order."""


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    """Random tenants and entry ids almost never name anything: as often, a valid one is swapped for a
    seeded tenant (and one of its entries), so entries that exist are read, exported and deleted too."""
    if not SEEDED or not isinstance(path_parameters, dict):
        return st.just(path_parameters)
    tenant, entry_id = path_parameters.get("tenant"), path_parameters.get("entry_id")
    if not (isinstance(tenant, str) and valid_tenant_id(tenant)):
        return st.just(path_parameters)  # an invalid tenant stays: that is what the case tests
    if "entry_id" in path_parameters and not (isinstance(entry_id, str) and valid_entry_id(entry_id)):
        return st.just(path_parameters)
    variants = [path_parameters]
    for name, ids in SEEDED.items():
        if "entry_id" in path_parameters:
            variants += [{**path_parameters, "tenant": name, "entry_id": i} for i in ids]
        else:
            variants.append({**path_parameters, "tenant": name})
    return st.one_of(st.just(path_parameters), st.sampled_from(variants))


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx, value) -> bytes:
    """The import body is JSONL: the document describes it as an array of lines (one item a line)."""
    if isinstance(value, bytes):
        return value
    items = value if isinstance(value, list) else [value]
    return b"".join(json.dumps(item).encode() + b"\n" for item in items)


# --- checks of our own -------------------------------------------------------------------------------

_LEAKS = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|<[\w.]+ object at 0x[0-9a-f]+>|<class '[\w.]+'>|"
    r"/site-packages/|" + "|".join(re.escape(k) for k in (ADMIN_KEY, *TENANT_KEYS.values()))
)


def openai_error_shape(ctx, response, case) -> None:
    """Every 4xx (and 5xx) is `{"error": {"message": str, "type": str, "param": str|null, "code": str|null}}`."""
    if response.status_code < 400:
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"{response.status_code} body is not JSON: {response.content[:300]!r}") from None
    error = body.get("error") if isinstance(body, dict) else None
    assert isinstance(error, dict), f"{response.status_code} body has no 'error' object: {body!r:.300}"
    assert set(error) >= {"message", "type", "param", "code"}, f"error lacks fields: {error!r:.300}"
    assert isinstance(error["message"], str) and error["message"], f"error.message: {error!r:.300}"
    assert isinstance(error["type"], str) and error["type"], f"error.type: {error!r:.300}"
    assert error["param"] is None or isinstance(error["param"], str), f"error.param: {error!r:.300}"
    assert error["code"] is None or isinstance(error["code"], str), f"error.code: {error!r:.300}"
    return None


def no_internal_leak(ctx, response, case) -> None:
    """No traceback, object repr, install path or key in any error body."""
    if response.status_code < 400:
        return None
    text = response.content.decode("utf-8", "replace")
    found = _LEAKS.search(text)
    assert found is None, f"{response.status_code} body shows something internal ({found.group(0)!r}): {text[:300]}"
    return None


_SESSION = requests.Session()


def tenant_key_is_refused(ctx, response, case) -> None:
    """What the admin key was allowed to do, a tenant key is not: the same request again is a 403 in
    OpenAI's shape. (Missing and unknown keys are probed by schemathesis' `ignored_auth`.)"""
    if not 200 <= response.status_code < 300:
        return None
    request = response.request.copy()
    request.headers["Authorization"] = f"Bearer {TENANT_KEYS['acme']}"
    refused = _SESSION.send(request, timeout=30)
    assert refused.status_code == 403, f"a tenant key got {refused.status_code}: {refused.text[:300]}"
    error = refused.json().get("error") or {}
    assert error.get("type") == "permission_error" and error.get("message"), refused.text[:300]
    return None


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          openai_error_shape, no_internal_leak, ignored_auth, tenant_key_is_refused]


# --- a real gateway with entries in its cache ------------------------------------------------------------

def _http(method: str, url: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _chat(gw, tenant: str, content: str) -> None:
    body = {"model": "small", "messages": [{"role": "user", "content": content}], "max_tokens": 6, "temperature": 0}
    status, raw = _http("POST", gw.url + "/v1/chat/completions", json.dumps(body).encode(),
                        {"Authorization": f"Bearer {TENANT_KEYS[tenant]}", "Content-Type": "application/json"})
    assert status == 200, raw


def _entries(gw, tenant: str) -> list[dict]:
    status, raw = _http("GET", f"{gw.url}/admin/cache/{tenant}/entries", headers=ADMIN)
    assert status == 200, raw
    return json.loads(raw)["data"]


@pytest.fixture(scope="module")
def admin_gateway(workdir, upstream):
    """A gateway whose encoder is loaded (so search answers, not 503) with a few entries in acme and
    globex (real chat completions at temperature 0), in `imported` (acme's export, imported), and in
    the fuzz's own `fuzzed-a` and `fuzzed-b` (imported too)."""
    own = workdir / "admin-fuzz"
    own.mkdir()
    gw = start_gateway(own, gateway_config({"small": [upstream.url]}))
    try:
        deadline = time.monotonic() + 60
        while True:  # the encoder loads in the background after start
            ready = json.loads(_http("GET", gw.url + "/readyz")[1])
            if (ready.get("cache") or {}).get("encoder"):
                break
            assert time.monotonic() < deadline, f"encoder not loaded: {ready}"
            time.sleep(0.2)
        prompts = ["What is the capital of France?", "Name the largest planet in the solar system.",
                   "How many legs does a spider have?"]
        for text in prompts:
            _chat(gw, "acme", text)
        _chat(gw, "globex", prompts[0])
        deadline = time.monotonic() + 30
        while len(_entries(gw, "acme")) < len(prompts) or not _entries(gw, "globex"):  # stores land after the answer
            assert time.monotonic() < deadline, "cache entries were not stored"
            time.sleep(0.1)
        status, export = _http("GET", gw.url + "/admin/cache/acme/export", headers=ADMIN)
        assert status == 200 and export.count(b"\n") == len(prompts), export[:300]
        for tenant in ("imported", "fuzzed-a", "fuzzed-b"):
            status, raw = _http("POST", f"{gw.url}/admin/cache/{tenant}/import", export,
                                {**ADMIN, "Content-Type": "application/x-ndjson"})
            assert status == 200 and json.loads(raw)["imported"] == len(prompts), raw
        for tenant in ("fuzzed-a", "fuzzed-b"):
            SEEDED[tenant] = [e["id"] for e in _entries(gw, tenant)]
        EXPORTED.append(json.loads(export.splitlines()[0]))
        yield gw
    finally:
        SEEDED.clear()
        EXPORTED.clear()
        gw.stop()


EXPORTED: list[dict] = []
"""One line of acme's export, as a template for import edge cases."""


# --- auth: plain asserts ---------------------------------------------------------------------------------

def _assert_error(status: int, raw: bytes, expected: int) -> dict:
    assert status == expected, (status, raw)
    body = json.loads(raw)
    assert set(body) == {"error"} and set(body["error"]) >= {"message", "type", "param", "code"}, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


@pytest.mark.parametrize("method,path", [("GET", "/admin/cache/tenants"), ("GET", "/admin/cache/acme/entries"),
                                         ("DELETE", "/admin/cache/acme"), ("PUT", "/admin/cache/acme/threshold")])
def test_admin_routes_need_the_admin_key(admin_gateway, method, path):
    url = admin_gateway.url + path
    threshold_url = admin_gateway.url + "/admin/cache/acme/threshold"
    before = _entries(admin_gateway, "acme"), _http("GET", threshold_url, headers=ADMIN)[1]
    body = b'{"threshold": 0.5}' if method == "PUT" else None
    error = _assert_error(*_http(method, url, body), 401)
    assert error["type"] == "authentication_error"
    error = _assert_error(*_http(method, url, body, {"Authorization": "Bearer sk-not-a-key"}), 401)
    assert error["type"] == "authentication_error"
    error = _assert_error(*_http(method, url, body, {"Authorization": f"Bearer {TENANT_KEYS['acme']}"}), 403)
    assert error["type"] == "permission_error"
    # Nothing was flushed or changed by the refused calls.
    assert (_entries(admin_gateway, "acme"), _http("GET", threshold_url, headers=ADMIN)[1]) == before


def test_seeded_entries_conform(admin_gateway):
    """The document's Entry schema holds for real entries (made by the gateway, and imported)."""
    for tenant in ("acme", "globex", "imported"):
        for entry in _entries(admin_gateway, tenant):
            status, raw = _http("GET", f"{admin_gateway.url}/admin/cache/{tenant}/entries/{entry['id']}", headers=ADMIN)
            assert status == 200, raw
            assert json.loads(raw) == entry
    operation = schema["/admin/cache/{tenant}/entries"]["GET"]
    case = operation.Case(path_parameters={"tenant": "acme"}, query={"q": "capital of France", "min_similarity": 0.1})
    response = case.call_and_validate(base_url=admin_gateway.url, headers=ADMIN, checks=CHECKS)
    assert response.json()["data"], "search found none of the seeded entries"


# --- edge cases the generators seldom reach, under the same checks -------------------------------------

def _send(admin_gateway, method: str, path: str, template: str, path_parameters: dict, *, query: dict | None = None,
          body: bytes | None = None, headers: dict | None = None) -> requests.Response:
    """Send one raw request and validate its response like the fuzz does (CHECKS, against `template`)."""
    operation = schema[template][method]
    case = operation.Case(path_parameters=path_parameters, query=query, headers=dict(ADMIN))
    response = requests.request(method, admin_gateway.url + path, params=query, data=body,
                                headers={**ADMIN, **(headers or {})}, timeout=30)
    case.validate_response(response, checks=CHECKS)
    return response


BIG_NUMBER = "1" * 4301  # int() refuses more than 4300 digits (sys.get_int_max_str_digits)


@pytest.mark.parametrize("name", ["limit", "offset"])
def test_an_integer_query_parameter_of_many_digits_is_a_400(admin_gateway, name):
    response = _send(admin_gateway, "GET", "/admin/cache/acme/entries", "/admin/cache/{tenant}/entries",
                     {"tenant": "acme"}, query={name: BIG_NUMBER})
    assert response.status_code == 400 and response.json()["error"]["param"] == name, response.text[:300]


def test_a_tenant_id_with_a_trailing_newline_is_a_400(admin_gateway):
    response = _send(admin_gateway, "GET", "/admin/cache/acme%0A/stats", "/admin/cache/{tenant}/stats",
                     {"tenant": "acme\n"})
    assert response.status_code == 400 and response.json()["error"]["param"] == "tenant", response.text[:300]


def test_an_entry_id_with_a_trailing_newline_is_a_400(admin_gateway):
    response = _send(admin_gateway, "GET", "/admin/cache/acme/entries/0123456789abcdef%0A",
                     "/admin/cache/{tenant}/entries/{entry_id}", {"tenant": "acme", "entry_id": "0123456789abcdef\n"})
    assert response.status_code == 400 and response.json()["error"]["param"] == "entry_id", response.text[:300]
    response = _send(admin_gateway, "POST", "/admin/cache/acme/delete", "/admin/cache/{tenant}/delete",
                     {"tenant": "acme"}, body=b'{"ids": ["0123456789abcdef\\n"]}',
                     headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["error"]["param"] == "ids", response.text[:300]


@pytest.mark.parametrize("method,path,template,encoding", [
    ("PUT", "/admin/cache/acme/threshold", "/admin/cache/{tenant}/threshold", "gzip"),
    ("POST", "/admin/cache/acme/delete", "/admin/cache/{tenant}/delete", "deflate"),
    ("POST", "/admin/cache/acme/import", "/admin/cache/{tenant}/import", "gzip"),
])
def test_a_body_that_cannot_be_decoded_is_a_400(admin_gateway, method, path, template, encoding):
    response = _send(admin_gateway, method, path, template, {"tenant": "acme"}, body=b"not compressed at all",
                     headers={"Content-Encoding": encoding, "Content-Type": "application/json"})
    assert response.status_code == 400, response.text[:300]


def test_an_import_line_longer_than_512_kib_is_imported(admin_gateway):
    """An entry with a long prompt exports as one long line; importing it must not fail (or be a 5xx)."""
    line = {**EXPORTED[0], "id": "0fedcba987654321", "text": "long prompt " * 60_000, "vector": None,
            "expires_at": time.time() + 3600}
    response = _send(admin_gateway, "POST", "/admin/cache/longlines/import", "/admin/cache/{tenant}/import",
                     {"tenant": "longlines"}, body=json.dumps(line).encode() + b"\n",
                     headers={"Content-Type": "application/x-ndjson"})
    assert response.status_code == 200 and response.json()["imported"] == 1, response.text[:300]


def test_an_import_line_over_the_limit_is_refused_alone(admin_gateway):
    """A line past 16 MiB is read to its end but not kept: reported as that line's error; the lines
    around it, split across the same chunks, are imported."""
    def line(entry_id: str) -> bytes:
        return json.dumps({**EXPORTED[0], "id": entry_id, "vector": None, "expires_at": time.time() + 3600}).encode()
    body = line("0aaaaaaaaaaaaaa1") + b"\n" + b"x" * (17 * 1024 * 1024) + b"\n" + line("0aaaaaaaaaaaaaa2")  # no final newline
    response = _send(admin_gateway, "POST", "/admin/cache/biglines/import", "/admin/cache/{tenant}/import",
                     {"tenant": "biglines"}, body=body, headers={"Content-Type": "application/x-ndjson"})
    result = response.json()
    assert response.status_code == 200 and result["imported"] == 2, response.text[:300]
    assert [e["line"] for e in result["errors"]] == [2] and "longer than" in result["errors"][0]["error"]


# --- the fuzz ------------------------------------------------------------------------------------------


@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True, database=None, print_blob=True,
          suppress_health_check=list(HealthCheck))
def test_admin_api_fuzz(case, admin_gateway):
    case.call_and_validate(base_url=admin_gateway.url, headers=ADMIN, checks=CHECKS, timeout=30)
