"""Step 12: the one log line and the metrics for a finished request."""

from __future__ import annotations

from gateway import metrics
from gateway.context import RequestContext
from gateway.logs import log


def record(state, ctx: RequestContext) -> None:
    total = ctx.elapsed()
    tenant, model = ctx.tenant_id or "-", ctx.public_model or "-"
    status = ctx.status or 500
    metrics.REQUESTS.labels(tenant, model, str(status)).inc()
    if ctx.ttft is not None and status == 200:
        metrics.TTFT.labels(tenant, model).observe(ctx.ttft)
        metrics.TTLT.labels(tenant, model).observe(ctx.ttlt or total)
    prompt_tokens = ctx.usage_prompt_tokens if ctx.usage_prompt_tokens is not None else ctx.prompt_tokens
    if prompt_tokens:
        metrics.TOKENS.labels(tenant, model, "prompt").inc(prompt_tokens)
    if ctx.completion_tokens:
        metrics.TOKENS.labels(tenant, model, "completion").inc(ctx.completion_tokens)
    overhead = total - ctx.upstream_seconds
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
