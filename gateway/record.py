"""Step 12: the one log line and the metrics for a finished request."""

from __future__ import annotations

import functools

from gateway import metrics
from gateway.context import RequestContext
from gateway.logs import log


@functools.lru_cache(maxsize=4096)
def _series(tenant: str, model: str, status: int):
    """The labelled children one (tenant, model, status) records into, resolved once: `labels()` takes a
    lock and builds tuples, which on the hot path costs more than the increments themselves."""
    return (metrics.REQUESTS.labels(tenant, model, str(status)), metrics.TTFT.labels(tenant, model),
            metrics.TTLT.labels(tenant, model), metrics.TOKENS.labels(tenant, model, "prompt"),
            metrics.TOKENS.labels(tenant, model, "completion"))


def record(state, ctx: RequestContext) -> None:
    total = ctx.elapsed()
    # Only a model name the policy resolved becomes a label: a client's unknown names would otherwise
    # grow the metric series without bound.
    tenant, model = ctx.tenant_id or "-", ctx.public_model if ctx.pool else "-"
    status = ctx.status or 500
    requests, ttft, ttlt, prompt, completion = _series(tenant, model, status)
    requests.inc()
    if ctx.ttft is not None and status == 200:
        ttft.observe(ctx.ttft)
        ttlt.observe(ctx.ttlt or total)
    prompt_tokens = ctx.usage_prompt_tokens if ctx.usage_prompt_tokens is not None else ctx.prompt_tokens
    if prompt_tokens:
        prompt.inc(prompt_tokens)
    if ctx.completion_tokens:
        completion.inc(ctx.completion_tokens)
    # Queue time is neither the backend's nor the proxy's own cost: it is reported on its own.
    overhead = total - ctx.upstream_seconds - ctx.queue_seconds
    metrics.OVERHEAD.observe(overhead if overhead > 0 else 0.0)
    if not state.log_requests:
        return
    fields = {
        "request_id": ctx.request_id, "tenant": ctx.tenant_id or None, "key": ctx.key_name or None,
        "endpoint": ctx.endpoint, "model": ctx.public_model or None, "route": ctx.pool, "backend": ctx.backend or None,
        "stream": ctx.stream, "status": status, "error": ctx.error_code, "cache": ctx.cache_result,
        "class": ctx.task_class, "prompt_tokens": prompt_tokens, "completion_tokens": ctx.completion_tokens,
        "max_tokens": ctx.max_output_tokens,
        "ttft_ms": round(ctx.ttft * 1000, 3) if ctx.ttft is not None else None,
        "ttlt_ms": round(ctx.ttlt * 1000, 3) if ctx.ttlt is not None else None,
        "total_ms": round(total * 1000, 3), "upstream_ms": round(ctx.upstream_seconds * 1000, 3),
        "queue_ms": round(ctx.queue_seconds * 1000, 3), "overhead_ms": round(overhead * 1000, 3),
    }
    if ctx.log_fields:
        fields.update(ctx.log_fields)
    if ctx.tenant is not None and ctx.tenant.log_prompts and ctx.body:
        fields["messages"] = ctx.body.get("messages") or ctx.body.get("prompt")
    log.info("request", **fields)
