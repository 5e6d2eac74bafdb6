"""The gateway configuration and tenant policy schema (pydantic).

One YAML file configures a gateway: its server limits, the backend pools, the public model names and
the tenants with their keys and policies. `policies.loader` turns a file into a `GatewayConfig` and
reports every error with file, line and field.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"


class Strict(BaseModel):
    """Unknown keys are errors: a typo in a policy must never silently do nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --- backends -----------------------------------------------------------------------------------


class Timeouts(Strict):
    connect: float = Field(5.0, gt=0, description="TCP + TLS connect, seconds")
    first_token: float = Field(60.0, gt=0, description="request sent → response headers and first event")
    idle: float = Field(30.0, gt=0, description="longest gap between two streamed events")
    total: float = Field(600.0, gt=0, description="whole request, seconds")


class UpstreamMember(Strict):
    kind: Literal["openai"] = "openai"
    url: str = Field(description="base URL including /v1, e.g. http://vllm:8000/v1")
    model: str | None = Field(None, description="model name the upstream serves; default: the public name")
    api_key_env: str | None = Field(None, description="environment variable holding the upstream's key")
    weight: float = Field(1.0, ge=0)
    max_connections: int = Field(256, ge=1)

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v.rstrip("/")


class LocalMember(Strict):
    kind: Literal["local"]
    model: str = Field(description="HF causal LM directory, or 'bundled:target' / 'bundled:draft'")
    draft: str | None = Field(None, description="draft model directory for speculative decoding")
    weight: float = Field(1.0, ge=0)


def _member_kind(v: object) -> str:
    # `kind` may be omitted for the common case, an OpenAI-compatible upstream.
    return v.get("kind", "openai") if isinstance(v, dict) else getattr(v, "kind", "openai")


Member = Annotated[
    Annotated[UpstreamMember, Tag("openai")] | Annotated[LocalMember, Tag("local")],
    Discriminator(_member_kind),
]


class Pool(Strict):
    members: list[Member] = Field(min_length=1)
    timeouts: Timeouts = Timeouts()
    max_attempts: int = Field(2, ge=1, le=10, description="members tried before the first byte is sent")


class ModelRoute(Strict):
    pool: str
    description: str | None = None


# --- tenant policy sections -----------------------------------------------------------------------


class KeyLimits(Strict):
    """Limits each API key of the tenant gets on its own, inside the tenant-wide ones."""

    requests_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1)


class Limits(Strict):
    """Per-minute token buckets, shared by every replica through Redis (see docs/budgets.md)."""

    requests_per_minute: int | None = Field(None, ge=1, description="tenant-wide, all keys together")
    tokens_per_minute: int | None = Field(
        None, ge=1, description="input + reserved output tokens at admission, reconciled with actual usage"
    )
    per_key: KeyLimits = KeyLimits()
    reserve_output_tokens: int = Field(
        256, ge=0, description="output tokens reserved at admission when neither the request nor a budget bounds them"
    )


CompressionStep = Literal["normalize", "dedupe", "fewshot", "extractive", "lm_prune", "truncate"]


class Compression(Strict):
    """The `compress` action: steps run in this order, each only while the prompt is still over budget."""

    steps: list[CompressionStep] = Field(default_factory=lambda: ["normalize", "dedupe", "fewshot", "extractive"])
    near_duplicate: float = Field(0.85, gt=0.0, le=1.0, description="word-trigram Jaccard that makes two turns duplicates")
    fewshot_keep: int = Field(1, ge=0, description="few-shot examples always kept (the most related ones)")
    extractive_scorer: Literal["lexical", "embedding"] = "lexical"
    compress_system: bool = Field(False, description="let extractive / lm_prune shorten system messages too")
    lm_model: str | None = Field(None, description="causal LM directory for lm_prune; default backends/models/draft")

    @field_validator("steps")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("each step may appear once")
        if "truncate" in v and v[-1] != "truncate":
            raise ValueError("truncate, when listed, must be the last step")
        return v


class Budgets(Strict):
    """Per-turn token budgets (docs/budgets.md). Input and total are checked exactly: N tokens pass, N+1 do not."""

    max_input_tokens: int | None = Field(None, ge=1)
    max_output_tokens: int | None = Field(None, ge=1, description="clamps max_tokens / max_completion_tokens")
    max_total_tokens: int | None = Field(None, ge=2, description="input + output; clamps the output to what is left")
    on_input_over: Literal["reject", "truncate", "compress"] = "reject"
    compression: Compression = Compression()


class CachePolicy(Strict):
    enabled: bool = True
    semantic: bool = True
    threshold: float = Field(0.9, ge=0.0, le=1.0)
    ttl_seconds: int = Field(86400, ge=1)
    only_deterministic: bool = True


class RoutingPolicy(Strict):
    """Filled by the classifier/routing issue; `auto` resolves through these rules."""

    rules: list[dict] = Field(default_factory=list)
    default_pool: str | None = None
    allow_header_override: bool = False


class Guardrails(Strict):
    enabled: bool = False


class ApiKey(Strict):
    sha256: str = Field(description="hex SHA-256 of the key; `switchyard policy hash-key` prints one")
    name: str = "default"

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v: str) -> str:
        v = v.lower()
        if not _SHA256.match(v):
            raise ValueError("must be 64 lowercase hex characters (SHA-256 of the key)")
        return v


class Tenant(Strict):
    keys: list[ApiKey] = Field(min_length=1)
    models: list[str] = Field(min_length=1, description="public model names this tenant may use; '*' = all")
    limits: Limits = Limits()
    budgets: Budgets = Budgets()
    cache: CachePolicy = CachePolicy()
    routing: RoutingPolicy = RoutingPolicy()
    guardrails: Guardrails = Guardrails()
    log_prompts: bool = Field(False, description="opt in to prompt text in logs")

    def may_use(self, model: str) -> bool:
        return "*" in self.models or model in self.models


class Server(Strict):
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    admin_keys: list[ApiKey] = Field(default_factory=list)


class GatewayConfig(Strict):
    server: Server = Server()
    pools: dict[Annotated[str, Field(pattern=_NAME)], Pool]
    models: dict[Annotated[str, Field(pattern=_NAME)], ModelRoute]
    tenants: dict[Annotated[str, Field(pattern=_NAME)], Tenant]

    def reference_errors(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Cross-references pydantic cannot check field by field: (path, message) for each problem."""
        errors: list[tuple[tuple[str | int, ...], str]] = []
        for name, route in self.models.items():
            if route.pool not in self.pools:
                errors.append((("models", name, "pool"), f"unknown pool {route.pool!r}"))
        seen: dict[str, str] = {}
        for tname, tenant in self.tenants.items():
            for i, m in enumerate(tenant.models):
                if m != "*" and m not in self.models:
                    errors.append((("tenants", tname, "models", i), f"unknown model {m!r}"))
            for i, key in enumerate(tenant.keys):
                if key.sha256 in seen:
                    errors.append((("tenants", tname, "keys", i, "sha256"),
                                   f"key also belongs to tenant {seen[key.sha256]!r}"))
                seen[key.sha256] = tname
        for i, key in enumerate(self.server.admin_keys):
            if key.sha256 in seen:
                errors.append((("server", "admin_keys", i, "sha256"), "an admin key must not also be a tenant key"))
        return errors
