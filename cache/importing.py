"""Reading one line of an admin import (JSONL, as `/admin/cache/{tenant}/export` writes it).

An import is the one way into the cache that does not come from an upstream answer, so every field is
checked before anything is stored: an entry that would fail when served (usage that is not a count, an
id FAISS cannot hold, a finish reason the gateway never stores) is refused with a message that names
the field. Keys and tenant are not taken from the line: they are re-scoped to the importing tenant.
"""

from __future__ import annotations

import math
import time
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError, field_validator

from cache.embed_text import SEMANTIC_MAX_CHARS
from cache.entry import ENTRY_ID_PATTERN, FINGERPRINT_MAX_CHARS, CacheEntry, vector_from_b64

CLOCK_SKEW_SECONDS = 300  # how far ahead of this replica's clock another's may run

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class BadImportLine(ValueError):
    """A line that cannot be imported; the message names the fields."""


class ExportedEntry(BaseModel):
    """The fields of an exported entry that an import keeps. Others (tenant, exact_key, context_key,
    created_by) are ignored: they are derived again for the importing tenant."""

    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)

    id: Annotated[str, Field(pattern=ENTRY_ID_PATTERN)]  # the same number names the entry in FAISS
    endpoint: Literal["chat", "completions"]
    model: str
    request_model: str | None = None
    text: str
    response_text: str
    finish_reason: Literal["stop", "length"]  # what the gateway stores (service.STORABLE_FINISH_REASONS)
    usage: dict[Literal["prompt_tokens", "completion_tokens", "total_tokens"], NonNegativeInt] = {}
    created_at: float
    expires_at: float
    hits: NonNegativeInt = 0
    last_hit_at: float | None = None
    request_digest: Digest
    context_digest: Digest
    system_fingerprint: Annotated[str, Field(max_length=FINGERPRINT_MAX_CHARS)] | None = None
    vector: np.ndarray | None = None  # base64 float32 in the line, decoded once here

    @field_validator("created_at", "expires_at", "last_hit_at")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number of seconds since the epoch")
        return value

    @field_validator("created_at")
    @classmethod
    def _not_in_the_future(cls, value: float) -> float:
        # An answer "made" later than now would pass every client max-age and report Age 0.
        if math.isfinite(value) and value > time.time() + CLOCK_SKEW_SECONDS:
            raise ValueError("must not be in the future")
        return value

    @field_validator("vector", mode="before")
    @classmethod
    def _vector(cls, value: object) -> np.ndarray | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError("must be a base64 string")
        try:
            vector = vector_from_b64(value)
        except (ValueError, TypeError) as exc:  # binascii.Error is a ValueError
            raise ValueError(f"not a base64 float32 vector of the encoder's size ({exc})") from None
        if vector is not None and not np.isfinite(vector).all():
            raise ValueError("holds values that are not finite")
        return vector


def describe(exc: ValidationError) -> str:
    """'field: problem; field: problem' for one line."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "line"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def entry_from_line(data: object, tenant_id: str) -> CacheEntry:
    """A `CacheEntry` for `tenant_id` from one parsed JSONL line (its keys still unscoped: the caller
    scopes `exact_key`/`context_key` from the digests). Raises `BadImportLine` naming what is wrong."""
    if not isinstance(data, dict):
        raise BadImportLine("line is not a JSON object")
    try:
        line = ExportedEntry.model_validate(data)
    except ValidationError as exc:
        raise BadImportLine(describe(exc)) from None
    # A long text never gets a vector from the gateway (SEMANTIC_MAX_CHARS); an import follows suit.
    vector = line.vector if len(line.text) <= SEMANTIC_MAX_CHARS else None
    return CacheEntry(
        id=line.id, tenant=tenant_id, endpoint=line.endpoint,
        request_model=line.request_model if line.request_model is not None else line.model, model=line.model,
        exact_key="", context_key="", text=line.text, vector=vector, response_text=line.response_text,
        finish_reason=line.finish_reason, usage=dict(line.usage), created_at=line.created_at,
        expires_at=line.expires_at, hits=line.hits, last_hit_at=line.last_hit_at,
        request_digest=line.request_digest, context_digest=line.context_digest,
        system_fingerprint=line.system_fingerprint,
    )
