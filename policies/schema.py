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
    max_outstanding_tokens: int | None = Field(
        None, ge=1, description="admission cap for this member; default: the pool's admission.max_outstanding_tokens")

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
    max_outstanding_tokens: int | None = Field(
        None, ge=1, description="admission cap for this member; default: the pool's admission.max_outstanding_tokens")


def _member_kind(v: object) -> str:
    # `kind` may be omitted for the common case, an OpenAI-compatible upstream.
    return v.get("kind", "openai") if isinstance(v, dict) else getattr(v, "kind", "openai")


Member = Annotated[
    Annotated[UpstreamMember, Tag("openai")] | Annotated[LocalMember, Tag("local")],
    Discriminator(_member_kind),
]


class Admission(Strict):
    """Gateway-side admission in front of each member of a pool (docs/admission.md). A request's tokens
    are its prompt tokens plus the most output it may produce (max_tokens after budgets, else the
    tenant's `limits.reserve_output_tokens`), times n."""

    max_outstanding_tokens: int = Field(
        1_000_000, ge=1, description="per member: tokens of the requests in flight on it; more wait in the queue "
                                     "(a single request above the cap runs alone on an idle member)")
    max_queued: int = Field(1024, ge=0, description="requests that may wait per pool; one more gets a 503 "
                                                     "admission_queue_full (0: never queue)")
    queue_timeout: float = Field(30.0, gt=0, description="seconds a request may wait; then a 503 "
                                                          "admission_queue_timeout")
    aging_tokens_per_second: float = Field(
        100.0, ge=0, description="a waiting request's priority improves by this many tokens per second waited")
    max_bypass: int = Field(32, ge=0, description="later arrivals that may be admitted before a waiting request; "
                                                   "then it goes next")
    retry_after: int = Field(1, ge=0, description="Retry-After seconds on the 503s (0: no header)")


class Pool(Strict):
    members: list[Member] = Field(min_length=1)
    tokenizer: str | None = Field(None, description="HF tokenizer dir/name the members use, for exact token "
                                                    "counts; default: a local member's model, else an estimate")
    timeouts: Timeouts = Timeouts()
    max_attempts: int = Field(2, ge=1, le=10, description="members tried before the first byte is sent")
    admission: Admission = Admission()


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
    queue_weight: float = Field(
        1.0, gt=0, le=1000, description="the tenant's share of a saturated pool's capacity against other tenants "
                                        "(docs/admission.md)")


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
    """Per-tenant cache settings; defaults are the shipped settings measured in docs/cache.md."""

    enabled: bool = True
    semantic: bool = True
    threshold: float = Field(0.65, ge=0.0, le=1.0, description="cosine a semantic candidate must reach")
    verify: bool = Field(True, description="near-miss guard on semantic candidates (cache.guard: rules, "
                                           "then the learned verifier)")
    learned_verifier: bool = Field(True, description="after the rules' hard vetoes, let the learned verifier "
                                   "(cache.guard.learned_model: gradient-boosted trees fitted on cache/data/train/) "
                                   "decide: at the shipped cuts it refuses pairs the rules pass but reads as another "
                                   "question (fewer wrong hits, ~1–3 points fewer paraphrase hits; docs/cache.md); "
                                   "false: the lexical rules alone")
    ttl_seconds: int = Field(86400, ge=1)
    only_deterministic: bool = True
    max_entries: int | None = Field(None, ge=1, description="per-tenant LRU bound; default: the store's")


TaskClass = Literal["simple", "complex", "code", "math"]
"""The prompt classifier's labels (`classifiers/model/prompt_classifier.json`; a test keeps them equal)."""

AUTO_MODEL = "auto"
"""The public model name that means "let Switchyard choose" by the routing rules."""


class RouteMatch(Strict):
    """Conditions of one routing rule; all that are set must hold. An empty match matches everything."""

    classes: list[TaskClass] | None = Field(None, min_length=1, description="classifier labels")
    min_confidence: float | None = Field(None, ge=0.0, le=1.0, description="classifier confidence ≥ this")
    max_confidence: float | None = Field(None, ge=0.0, le=1.0, description="classifier confidence < this")
    min_prompt_tokens: int | None = Field(None, ge=0, description="prompt tokens ≥ this")
    max_prompt_tokens: int | None = Field(None, ge=0, description="prompt tokens ≤ this")
    models: list[str] | None = Field(
        None,
        min_length=1,
        description="requested public model names; unset = `auto` (and every name when explicit_models: route)",
    )

    @field_validator("max_confidence")
    @classmethod
    def _confidence_range(cls, v, info):
        lo = info.data.get("min_confidence")
        if v is not None and lo is not None and lo >= v:
            raise ValueError("must be above min_confidence")
        return v

    @field_validator("max_prompt_tokens")
    @classmethod
    def _token_range(cls, v, info):
        lo = info.data.get("min_prompt_tokens")
        if v is not None and lo is not None and lo > v:
            raise ValueError("must not be below min_prompt_tokens")
        return v


class RouteRule(Strict):
    name: str | None = Field(None, description="shown in logs and the route reason")
    when: RouteMatch = RouteMatch()
    pool: str = Field(description="pool that serves a matching request")
    escalate_to: list[str] | None = Field(
        None, description="pools to try next, in order; default: the cascade ladder's rungs above `pool`"
    )

    @field_validator("escalate_to")
    @classmethod
    def _escalation(cls, v, info):
        if v is not None and info.data.get("pool") in v:
            raise ValueError(f"must not contain the rule's own pool {info.data['pool']!r}")
        return v


class Cascade(Strict):
    ladder: list[str] = Field(
        default_factory=list,
        description="pools from cheapest to strongest; a failed or refused request moves one rung up",
    )
    min_confidence: float | None = Field(
        None, ge=0.0, le=1.0, description="classifier confidence below this skips the chosen rung"
    )

    @field_validator("ladder")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("a pool appears twice in the ladder")
        return v


class RoutingPolicy(Strict):
    """How `auto` (and, if the tenant wants, explicit model names) resolve to backend pools.

    Rules are tried in order; the first match wins. `policies.routing.decide_route` applies them.
    """

    rules: list[RouteRule] = Field(default_factory=list)
    default_pool: str | None = Field(None, description="`auto` requests no rule matched; default: the `auto` model's pool")
    cascade: Cascade = Cascade()
    allow_header_override: bool = Field(False, description="honour `x-switchyard-route: <pool>`")
    explicit_models: Literal["honour", "route", "refuse"] = Field(
        "honour",
        description="a request naming a model: honour = its own pool; route = through the rules like "
        "`auto`; refuse = 403",
    )

    def pool_refs(self) -> list[tuple[tuple[str | int, ...], str]]:
        """(path inside this policy, pool name) for every pool it names: the config's cross-reference check."""
        refs: list[tuple[tuple[str | int, ...], str]] = []
        for i, rule in enumerate(self.rules):
            refs.append((("rules", i, "pool"), rule.pool))
            refs += [(("rules", i, "escalate_to", j), p) for j, p in enumerate(rule.escalate_to or ())]
        refs += [(("cascade", "ladder", j), p) for j, p in enumerate(self.cascade.ladder)]
        if self.default_pool is not None:
            refs.append((("default_pool",), self.default_pool))
        return refs

    @property
    def needs_classification(self) -> bool:
        """False when no decision depends on the class, so the gateway may skip the classifier."""
        return self.cascade.min_confidence is not None or any(
            r.when.classes is not None or r.when.min_confidence is not None or r.when.max_confidence is not None
            for r in self.rules
        )


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


class LocalEngine(Strict):
    """The in-process engine that serves every `kind: local` member of this gateway process (one engine
    per process, read at start; docs/scheduling.md). Unset fields fall back to the SWITCHYARD_ENGINE_*
    environment variables, then to the defaults shown."""

    schedule: Literal["fifo", "token", "continuous"] | None = Field(
        None, description="fifo (static batches by arrival), token (token-budget micro-batches) or continuous "
                          "(iteration-level); default continuous")
    max_running: int | None = Field(None, ge=1, le=256, description="sequences generating at once "
                                                                   "(default 4 for fifo, 32 otherwise)")
    step_token_budget: int | None = Field(None, ge=16, description="tokens one engine step may process "
                                                                  "(prefill chunks + decodes); default 256")
    batch_threshold: int | None = Field(None, ge=1, description="token mode: pending tokens that release a "
                                                               "micro-batch; default 256")
    spec_max_batch: int | None = Field(None, ge=-1, description="speculate freely only in steps with at most this "
                                                               "many decoding sequences (-1: always); default 4")
    spec_k_under_load: int | None = Field(None, ge=0, description="above spec_max_batch, the most draft tokens per "
                                                                 "sequence and step (0: speculation off); default 0")


class Server(Strict):
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    local_engine: LocalEngine = LocalEngine()
    redis_url: str | None = Field(None, description="shared state across replicas: cache, rate limits "
                                                     "(or $SWITCHYARD_REDIS_URL); in-process when unset")
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
            for path, pool in tenant.routing.pool_refs():
                if pool not in self.pools:
                    errors.append((("tenants", tname, "routing", *path), f"unknown pool {pool!r}"))
            for i, key in enumerate(tenant.keys):
                if key.sha256 in seen:
                    errors.append((("tenants", tname, "keys", i, "sha256"),
                                   f"key also belongs to tenant {seen[key.sha256]!r}"))
                seen[key.sha256] = tname
        for i, key in enumerate(self.server.admin_keys):
            if key.sha256 in seen:
                errors.append((("server", "admin_keys", i, "sha256"), "an admin key must not also be a tenant key"))
        return errors
