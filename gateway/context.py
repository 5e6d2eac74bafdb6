"""The typed context one request carries through the pipeline steps.

Each step reads what earlier steps decided and adds its own decision; nothing is computed twice (the
prompt text, its embedding and its token count are computed once, here, and shared).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from gateway.runtime import Runtime
    from policies.schema import Tenant


@dataclass(slots=True)
class RequestContext:
    request_id: str
    endpoint: str  # "chat" | "completions"
    body: dict[str, Any]
    """The body as it will be sent: budgets may shorten it, routing may rename its model."""
    request_body: dict[str, Any] = field(default_factory=dict)
    """The client's own body, untouched: what the cache keys on."""
    runtime: Runtime = None  # type: ignore[assignment]
    """The policy and pools this request runs on, from start to finish (reloads swap the next one)."""
    tenant_id: str = ""
    tenant: Tenant | None = None
    key_name: str = ""
    public_model: str = ""
    stream: bool = False
    include_usage: bool = False
    started: float = field(default_factory=time.perf_counter)

    # shared, computed once
    prompt_text: str | None = None
    embedding: np.ndarray | None = None
    prompt_tokens: int | None = None
    max_output_tokens: int | None = None
    output_bound_written: bool = False
    """The client set no max_tokens; the budget wrote `max_output_tokens` in (a cap for the backend)."""

    # decisions
    cache_result: str = "bypass"  # hit-exact | hit-semantic | miss | bypass
    cache_store: bool = False
    """A cacheable miss: store the answer once it completes cleanly."""
    refusal_escalates: bool = False
    """The pool answering is not the route's last: a refusal from it would escalate (unless streamed)."""
    task_class: str | None = None
    class_confidence: float | None = None
    pool: str | None = None
    backend: str = ""
    member: str = ""

    # outcome
    status: int = 0
    completion_tokens: int = 0
    usage_prompt_tokens: int | None = None
    ttft: float | None = None
    ttlt: float | None = None
    upstream_seconds: float = 0.0
    queue_seconds: float = 0.0
    error_code: str | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    log_fields: dict[str, Any] = field(default_factory=dict)
    """Extra fields steps add to the request's log line (budget action, compression ratio, ...)."""

    def elapsed(self) -> float:
        return time.perf_counter() - self.started
