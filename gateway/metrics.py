"""Prometheus metrics, all prefixed `switchyard_`, on the default registry that `/metrics` serves."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Latency buckets from sub-millisecond (cache hits, gateway overhead) to minutes (long generations).
_LATENCY = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
_OVERHEAD = (0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1)

REQUESTS = Counter("switchyard_requests_total", "Requests answered", ["tenant", "model", "status"])
TTFT = Histogram("switchyard_ttft_seconds", "Time to first token (first byte of the answer)", ["tenant", "model"],
                 buckets=_LATENCY)
TTLT = Histogram("switchyard_ttlt_seconds", "Time to last token (whole response)", ["tenant", "model"],
                 buckets=_LATENCY)
TOKENS = Counter("switchyard_tokens_total", "Tokens processed", ["tenant", "model", "kind"])
IN_FLIGHT = Gauge("switchyard_in_flight_requests", "Requests being handled now")
UPSTREAM_ERRORS = Counter("switchyard_upstream_errors_total", "Backend failures", ["backend", "code"])
OVERHEAD = Histogram("switchyard_gateway_overhead_seconds",
                     "Gateway time per request outside the backend (total minus backend time)", buckets=_OVERHEAD)
POLICY_RELOADS = Counter("switchyard_policy_reloads_total", "Policy reload attempts", ["result"])
