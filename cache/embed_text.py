"""Which text of a request is embedded — one definition for the whole gateway.

`embedding_text(endpoint, body)` is the text the encoder turns into *the* request vector (step 5); the
semantic cache searches with it and the classifier reuses it.

What is embedded: **the last user turn only** (for /v1/completions: the prompt).
What is not embedded, and why:
- The system prompt. Deployments send the same long system prompt with every question; embedded
  together with a short question it dominates the vector and makes different questions look alike.
- The earlier conversation. A follow-up such as "and in French?" means nothing without it, and two
  conversations that end in the same words are not the same request.
Both still decide the answer, so they are not ignored: `conversation_digest` hashes them (exactly),
and the semantic cache only compares requests whose digest is equal (see `cache.keys.context_key`).
The vector answers "is this the same question?", the digest answers "in the same setting?".

Pure functions of the request body; no I/O.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

# Past this many characters the semantic layer is skipped (exact layer only): the encoder reads 256
# word pieces, and the guard cannot vouch for long documents that differ past what it reads.
SEMANTIC_MAX_CHARS = 1000


def content_text(content: Any) -> str | None:
    """The text of a message `content` (string or list of parts). None if any part is not text (an
    image or audio part changes the question in a way the text does not show)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                return None
        return "\n".join(texts)
    return None


def last_user_index(messages: list[dict[str, Any]]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], dict) and messages[i].get("role") == "user":
            return i
    return None


def embedding_text(endpoint: str, body: dict[str, Any]) -> str:
    """The text to embed for this request: the last user turn (chat) or the prompt (completions).
    Empty string when there is none (e.g. a prompt given as token ids)."""
    return _raw_text(endpoint, body).strip()


def _raw_text(endpoint: str, body: dict[str, Any]) -> str:
    """The embedded turn as sent, surrounding whitespace included."""
    if endpoint == "chat":
        messages = body.get("messages") or []
        i = last_user_index(messages)
        if i is None:
            return ""
        return content_text(messages[i].get("content")) or ""
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    return prompt if isinstance(prompt, str) else ""


def semantic_eligible(endpoint: str, body: dict[str, Any]) -> bool:
    """Whether the semantic layer may look at this request at all (the exact layer always may). Not
    with `echo`: that answer repeats its own prompt, so another prompt's answer can never be right."""
    if body.get("echo"):
        return False
    text = embedding_text(endpoint, body)
    if not text or len(text) > SEMANTIC_MAX_CHARS:
        return False
    if endpoint == "chat":
        messages = body.get("messages") or []
        i = last_user_index(messages)
        return i is not None and content_text(messages[i].get("content")) is not None
    return True


def conversation_digest(endpoint: str, body: dict[str, Any]) -> str:
    """SHA-256 over everything of the conversation except the embedded turn's words: system prompts,
    earlier turns, any messages after the last user turn (tool results, assistant prefill), and the
    whitespace around the embedded text, which the embedding drops but the model reads ("The capital of
    France is " continues differently from "… is")."""
    edges = _edges(_raw_text(endpoint, body))
    if endpoint != "chat":
        return hashlib.sha256(orjson.dumps({"completions": edges})).hexdigest()
    messages = list(body.get("messages") or [])
    i = last_user_index(messages)
    context = [m for j, m in enumerate(messages) if j != i]
    last_user_extra = {}
    if i is not None:  # a named user, or attached fields on the turn, are part of the setting
        last_user_extra = {k: v for k, v in messages[i].items() if k not in ("content", "role")}
    payload = orjson.dumps({"context": context, "turn": last_user_extra, "edges": edges}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(payload).hexdigest()


def _edges(text: str) -> list[str]:
    return [text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]]
