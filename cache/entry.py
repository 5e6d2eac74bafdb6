"""Cache entries and hits: the records every store keeps and every layer returns."""

from __future__ import annotations

import base64
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

DIM = 384


def new_entry_id() -> str:
    """16 hex digits = a positive int64, so the same id names the entry in stores and in FAISS."""
    return f"{secrets.randbits(63):016x}"


ENTRY_ID_PATTERN = r"^[0-7][0-9a-f]{15}$"
"""16 lower-case hex digits below 2^63: what `new_entry_id` makes and FAISS can hold (a signed int64)."""
_ENTRY_ID = re.compile(ENTRY_ID_PATTERN)


def valid_entry_id(entry_id: str) -> bool:
    return _ENTRY_ID.fullmatch(entry_id) is not None


def faiss_id(entry_id: str) -> int:
    return int(entry_id, 16)


def entry_id_of(faiss_id_: int) -> str:
    return f"{int(faiss_id_):016x}"


def vector_to_b64(vector: np.ndarray | None) -> str | None:
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def vector_from_b64(data: str | bytes | None) -> np.ndarray | None:
    if not data:
        return None
    raw = base64.b64decode(data)
    vector = np.frombuffer(raw, dtype=np.float32)
    if vector.shape != (DIM,):
        raise ValueError(f"vector has {vector.size} values, expected {DIM}")
    return vector.copy()


FINGERPRINT_MAX_CHARS = 256  # an answer's `system_fingerprint` longer than this is not kept


def fingerprint_or_none(value: object) -> str | None:
    """A `system_fingerprint` worth keeping: a string of at most FINGERPRINT_MAX_CHARS, else None (entries
    from before it was kept have none; a backend may send null or something odd)."""
    return value if isinstance(value, str) and len(value) <= FINGERPRINT_MAX_CHARS else None


@dataclass(slots=True)
class CacheEntry:
    id: str
    tenant: str
    endpoint: str  # "chat" | "completions"
    request_model: str  # the model name the client asked for (part of both keys)
    model: str  # the model that produced the answer
    exact_key: str
    context_key: str
    text: str  # the embedded text (last user turn), what the guard compares
    vector: np.ndarray | None  # None: exact layer only
    response_text: str
    finish_reason: str
    usage: dict[str, int] = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    expires_at: float = 0.0
    hits: int = 0
    last_hit_at: float | None = None
    created_by: str | None = None  # "gateway" or the admin who imported it
    request_digest: str = ""  # tenant-free forms of the two keys, so an import can re-scope them
    context_digest: str = ""
    system_fingerprint: str | None = None  # the backend configuration that produced the answer, as it said

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at <= (now if now is not None else time.time())

    def size_bytes(self) -> int:
        """Approximate payload bytes (text, answer, vector, keys); what the size bound counts."""
        vector = 0 if self.vector is None else DIM * 4
        return len(self.text.encode()) + len(self.response_text.encode()) + vector + 256

    def to_dict(self, *, with_vector: bool = True) -> dict[str, Any]:
        out = {
            "id": self.id, "tenant": self.tenant, "endpoint": self.endpoint,
            "request_model": self.request_model, "model": self.model, "exact_key": self.exact_key,
            "context_key": self.context_key, "text": self.text, "response_text": self.response_text,
            "finish_reason": self.finish_reason, "usage": self.usage, "created_at": self.created_at,
            "expires_at": self.expires_at, "hits": self.hits, "last_hit_at": self.last_hit_at,
            "created_by": self.created_by, "request_digest": self.request_digest,
            "context_digest": self.context_digest, "system_fingerprint": self.system_fingerprint,
        }
        if with_vector:
            out["vector"] = vector_to_b64(self.vector)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CacheEntry:
        return cls(
            id=str(data["id"]), tenant=str(data["tenant"]), endpoint=str(data["endpoint"]),
            request_model=str(data.get("request_model", data.get("model", ""))), model=str(data["model"]),
            exact_key=str(data["exact_key"]), context_key=str(data["context_key"]), text=str(data["text"]),
            vector=vector_from_b64(data.get("vector")), response_text=str(data["response_text"]),
            finish_reason=str(data["finish_reason"]), usage=dict(data.get("usage") or {}),
            created_at=float(data["created_at"]), expires_at=float(data["expires_at"]),
            hits=int(data.get("hits") or 0),
            last_hit_at=float(data["last_hit_at"]) if data.get("last_hit_at") is not None else None,
            created_by=data.get("created_by"), request_digest=str(data.get("request_digest") or ""),
            context_digest=str(data.get("context_digest") or ""),
            system_fingerprint=fingerprint_or_none(data.get("system_fingerprint")),
        )


@dataclass(slots=True, frozen=True)
class CacheHit:
    kind: Literal["exact", "semantic"]
    similarity: float  # 1.0 for exact hits
    entry: CacheEntry

    @property
    def entry_id(self) -> str:
        return self.entry.id

    @property
    def response_text(self) -> str:
        return self.entry.response_text

    @property
    def finish_reason(self) -> str:
        return self.entry.finish_reason

    @property
    def usage(self) -> dict[str, int]:
        return self.entry.usage

    @property
    def model(self) -> str:
        return self.entry.model

    @property
    def system_fingerprint(self) -> str | None:
        return self.entry.system_fingerprint


CacheResult = Literal["hit-exact", "hit-semantic", "miss", "bypass"]


@dataclass(slots=True, frozen=True)
class CacheLookup:
    """The outcome of one lookup: `result` is the x-switchyard-cache header value."""

    result: CacheResult
    hit: CacheHit | None = None
    reason: str | None = None  # why bypass / why a semantic candidate was refused

    @property
    def headers(self) -> dict[str, str]:
        headers = {"x-switchyard-cache": self.result}
        if self.hit is not None:
            headers["x-switchyard-cache-similarity"] = f"{self.hit.similarity:.4f}"
            headers["x-switchyard-cache-entry"] = self.hit.entry_id
            # HTTP's Age: how long ago the answer was made (what `max-age` in cache.directives bounds)
            headers["age"] = str(max(0, int(time.time() - self.hit.entry.created_at)))
        return headers
