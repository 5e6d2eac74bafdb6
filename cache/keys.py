"""Request normalisation: what may be cached, the exact key and the semantic context key.

Two requests get the same **exact key** only if a deterministic model must give them the same answer:
same tenant, endpoint, model, messages (or prompt) and every parameter that can change the answer.
Parameters that cannot (`stream`, `stream_options`, `user`, `metadata`, …) are left out, so a
streamed and a non-streamed request share an entry. Unknown parameters are *kept*: a parameter we do
not know might change the answer, and a missed hit is cheaper than a wrong one.

The **context key** is the exact key minus the embedded turn's text: the semantic layer only compares
requests with equal context keys (same tenant, model, parameters, system prompt and earlier turns).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from cache.embed_text import conversation_digest, content_text, last_user_index

KEY_VERSION = 2  # 2: text keyed as sent (whitespace kept), edges in the context, scope
# Parameters that do not change the answer. Everything else is part of the key.
IGNORED_PARAMS = frozenset({
    "stream", "stream_options", "user", "metadata", "store", "service_tier", "safety_identifier",
    "prompt_cache_key", "model",  # model is keyed separately (normalised)
    "messages", "prompt",  # keyed separately (normalised)
})
# OpenAI's defaults, so that an explicit default and an omitted parameter share a key.
DEFAULTS: dict[str, Any] = {
    "temperature": 1.0, "top_p": 1.0, "n": 1, "presence_penalty": 0.0, "frequency_penalty": 0.0,
    "logprobs": False, "echo": False, "best_of": 1, "parallel_tool_calls": True,
}
FLOAT_PARAMS = frozenset({"temperature", "top_p", "presence_penalty", "frequency_penalty"})


_NO_DEFAULT = object()


def _normal_params(body: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, value in body.items():
        if name in IGNORED_PARAMS or value is None:
            continue
        if name in FLOAT_PARAMS and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
        if name == "stop" and isinstance(value, str):
            value = [value]
        if name == "max_completion_tokens":
            name = "max_tokens"  # the two spellings of one limit
        default = DEFAULTS.get(name, _NO_DEFAULT)
        if type(default) is type(value) and default == value:  # `logprobs: 0` is not `False`
            continue
        params[name] = value
    return params


def _normal_message(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    text = content_text(out.get("content"))
    if text is not None:  # "hi" and [{"type": "text", "text": "hi"}] are the same message
        out["content"] = text  # not stripped: whitespace is tokenised and can change the answer
    return out


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def request_digest(endpoint: str, body: dict[str, Any], scope: str = "") -> str:
    """Tenant-free digest of everything that decides the answer (the exact layer's identity). `scope`
    names what else does: the gateway passes a digest of the tenant's budgets and route (`gateway.caching`)."""
    payload: dict[str, Any] = {
        "v": KEY_VERSION, "endpoint": endpoint, "model": str(body.get("model", "")), "params": _normal_params(body),
    }
    if scope:
        payload["scope"] = scope
    if endpoint == "chat":
        payload["messages"] = [_normal_message(m) if isinstance(m, dict) else m
                               for m in body.get("messages") or []]
    else:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1:
            prompt = prompt[0]
        payload["prompt"] = prompt  # as sent: a trailing space changes how a completion continues
    return _digest(payload)


def context_digest(endpoint: str, body: dict[str, Any], scope: str = "") -> str:
    """Tenant-free digest of the request minus the embedded turn's text (the semantic namespace)."""
    payload = {
        "v": KEY_VERSION, "endpoint": endpoint, "model": str(body.get("model", "")), "params": _normal_params(body),
        "conversation": conversation_digest(endpoint, body),
    }
    if scope:
        payload["scope"] = scope
    return _digest(payload)


def scoped(tenant_id: str, digest: str) -> str:
    """A digest bound to one tenant: the form every key, index namespace and store uses."""
    return _digest({"tenant": tenant_id, "digest": digest})


def exact_key(tenant_id: str, endpoint: str, body: dict[str, Any], scope: str = "") -> str:
    return scoped(tenant_id, request_digest(endpoint, body, scope))


def context_key(tenant_id: str, endpoint: str, body: dict[str, Any], scope: str = "") -> str:
    return scoped(tenant_id, context_digest(endpoint, body, scope))


def is_deterministic(body: dict[str, Any]) -> bool:
    """Temperature 0 (greedy) or a fixed seed. An omitted temperature is OpenAI's default, 1."""
    temperature = body.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature == 0:
        return True
    return body.get("seed") is not None


def uncacheable_reason(endpoint: str, body: dict[str, Any], *, only_deterministic: bool) -> str | None:
    """Why this request must bypass the cache, or None if it may use it (policy switches aside)."""
    n = body.get("n")
    if n not in (None, 1):
        return "n>1"
    if body.get("best_of") not in (None, 1):
        return "best_of>1"
    logprobs = body.get("logprobs")
    if not (logprobs is None or logprobs is False) or body.get("top_logprobs"):  # `0 in (False,)` is True
        return "logprobs"  # not stored, so cannot be served (`logprobs: 0` asks for them too)
    if endpoint == "chat":
        messages = body.get("messages")
        if not isinstance(messages, list) or last_user_index(messages) is None:
            return "no user turn"
    else:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and not (len(prompt) == 1 and isinstance(prompt[0], str)):
            return "batch or token prompt"
        if not isinstance(prompt, (str, list)):
            return "no prompt"
    if only_deterministic and not is_deterministic(body):
        return "not deterministic"
    return None
