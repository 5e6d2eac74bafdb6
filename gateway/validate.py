"""OpenAI request validation: a clear 400 naming the field for anything a backend would choke on.

The pydantic models check what the gateway relies on and what every OpenAI-compatible server agrees
on; unknown fields are kept (extra="allow") and passed through, because upstreams add their own
(vLLM's `top_k`, `repetition_penalty`, ...). The validated body stays the client's own dict: the models
only check it, so pass-through costs no re-serialisation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from gateway.errors import APIError

MAX_STOP = 4
MAX_N = 16


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class ContentPart(_Open):
    type: str


class Message(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None
    name: str | None = None


class StreamOptions(_Open):
    include_usage: bool = False


Stop = str | Annotated[list[str], Field(max_length=MAX_STOP)] | None


class _Common(_Open):
    model: Annotated[str, Field(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    n: Annotated[int, Field(ge=1, le=MAX_N)] = 1
    stop: Stop = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    frequency_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    seed: int | None = None
    user: Annotated[str, Field(max_length=512)] | None = None

    @field_validator("stop")
    @classmethod
    def _stop_not_empty(cls, v: Any) -> Any:
        if isinstance(v, list) and any(s == "" for s in v):
            raise ValueError("stop sequences must be non-empty strings")
        return v


class ChatRequest(_Common):
    messages: Annotated[list[Message], Field(min_length=1)]
    max_completion_tokens: Annotated[int, Field(ge=1)] | None = None


class CompletionRequest(_Common):
    prompt: str | Annotated[list[str], Field(min_length=1)] | Annotated[list[int], Field(min_length=1)] | Annotated[
        list[Annotated[list[int], Field(min_length=1)]], Field(min_length=1)
    ]
    echo: bool = False
    best_of: Annotated[int, Field(ge=1, le=MAX_N)] | None = None


_ADAPTERS = {"chat": TypeAdapter(ChatRequest), "completions": TypeAdapter(CompletionRequest)}


def _param(body: Any, loc: tuple[Any, ...], missing: bool = False) -> str:
    """Field path of an error, e.g. `messages[0].role`. Pydantic adds union branch names to `loc`;
    keeping only the parts that index into the client's own data drops them."""
    out, node = "", body
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and part < len(node):
            out += f"[{part}]"
            node = node[part]
        elif isinstance(part, str) and isinstance(node, dict) and (part in node or missing):
            out += ("." if out else "") + part
            node = node.get(part)
    return out


def parse_json(raw: bytes) -> dict[str, Any]:
    if not raw:
        raise APIError(400, "The request body is empty; expected a JSON object.", code="invalid_json")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise APIError(400, f"The request body is not valid JSON: {exc.args[0]}", code="invalid_json") from None
    if not isinstance(body, dict):
        raise APIError(400, "The request body must be a JSON object.", code="invalid_json")
    return body


def validate(endpoint: str, body: dict[str, Any]) -> None:
    """Raise a 400 `APIError` naming the first bad field; return None when the body is acceptable."""
    try:
        _ADAPTERS[endpoint].validate_python(body)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        param = _param(body, errors[0]["loc"], errors[0]["type"] == "missing") or None
        # A union field yields one error per branch; the type mismatches are noise next to the branch
        # whose type matched (e.g. `stop` as a list that is too long).
        same = [e for e in errors if (_param(body, e["loc"], e["type"] == "missing") or None) == param]
        err = next((e for e in same if not e["type"].endswith("_type")), same[0])
        if err["type"] == "missing":
            message = f"Missing required parameter: '{param}'."
            code = "missing_required_parameter"
        else:
            message = f"Invalid value for '{param}': {err['msg']}."
            code = "invalid_value" if err["type"] not in ("too_short", "too_long") else "invalid_length"
            if param == "messages" and err["type"] == "too_short":
                message = "'messages' must contain at least one message."
        raise APIError(400, message, param=param, code=code) from None
    if endpoint == "chat":
        mt, mct = body.get("max_tokens"), body.get("max_completion_tokens")
        if mt is not None and mct is not None and mt != mct:
            raise APIError(
                400,
                "Set either 'max_tokens' or 'max_completion_tokens', not both with different values.",
                param="max_completion_tokens",
                code="invalid_value",
            )
    so = body.get("stream_options")
    if so is not None and not body.get("stream"):
        raise APIError(400, "'stream_options' is only allowed when 'stream' is true.", param="stream_options",
                       code="invalid_value")


def include_usage(body: dict[str, Any]) -> bool:
    so = body.get("stream_options")
    return bool(so and so.get("include_usage"))
