"""OpenAI wire objects built by Switchyard itself (local engine answers, cache hits, error events).

Every producer of responses that is not a pass-through uses these, so the shapes live in one place.
All builders return bytes (orjson), ready to be written as an SSE `data:` payload or a JSON body.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson


def new_id(endpoint: str) -> str:
    prefix = "chatcmpl-" if endpoint == "chat" else "cmpl-"
    return prefix + uuid.uuid4().hex


def now() -> int:
    return int(time.time())


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def chat_chunk(
    id: str,
    model: str,
    created: int,
    *,
    content: str | None = None,
    role: str | None = None,
    finish_reason: str | None = None,
    index: int = 0,
    extra: dict[str, Any] | None = None,
) -> bytes:
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    return orjson.dumps(
        {
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            **(extra or {}),
        }
    )


def completion_chunk(
    id: str, model: str, created: int, *, text: str = "", finish_reason: str | None = None, index: int = 0,
    extra: dict[str, Any] | None = None,
) -> bytes:
    return orjson.dumps(
        {
            "id": id,
            "object": "text_completion",
            "created": created,
            "model": model,
            "choices": [{"index": index, "text": text, "logprobs": None, "finish_reason": finish_reason}],
            **(extra or {}),
        }
    )


def usage_chunk(
    endpoint: str, id: str, model: str, created: int, use: dict[str, int], *, extra: dict[str, Any] | None = None
) -> bytes:
    """The final chunk `stream_options.include_usage` asks for: empty choices, usage filled.
    `extra`: additional top-level fields (e.g. the local engine's speculative decoding metrics)."""
    return orjson.dumps(
        {
            "id": id,
            "object": "chat.completion.chunk" if endpoint == "chat" else "text_completion",
            "created": created,
            "model": model,
            "choices": [],
            "usage": use,
            **(extra or {}),
        }
    )


def chat_completion(
    id: str,
    model: str,
    created: int,
    content: str,
    finish_reason: str,
    use: dict[str, int],
    *,
    extra: dict[str, Any] | None = None,
) -> bytes:
    return orjson.dumps(
        {
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": use,
            **(extra or {}),
        }
    )


def text_completion(
    id: str,
    model: str,
    created: int,
    text: str,
    finish_reason: str,
    use: dict[str, int],
    *,
    extra: dict[str, Any] | None = None,
) -> bytes:
    return orjson.dumps(
        {
            "id": id,
            "object": "text_completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}],
            "usage": use,
            **(extra or {}),
        }
    )


def error_body(message: str, type: str, param: str | None = None, code: str | None = None) -> bytes:
    """OpenAI's error shape. Also used as the payload of an in-stream error event."""
    return orjson.dumps({"error": {"message": message, "type": type, "param": param, "code": code}})
