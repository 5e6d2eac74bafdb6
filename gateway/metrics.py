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

# Admission (gateway/admission.py, docs/admission.md). Queue time is observed for each request that waited;
# requests admitted at once are counted, and the gauges read, from the live pools when /metrics is scraped,
# so the fast path updates no metric.
_QUEUE = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
ADMISSION_QUEUE_SECONDS = Histogram("switchyard_admission_queue_seconds",
                                    "Time a request that waited for capacity on a pool member waited (admitted, "
                                    "timed out or gone)", ["pool"], buckets=_QUEUE)
ADMISSION_REJECTED = Counter("switchyard_admission_rejected_total",
                             "Requests refused by admission (queue full, queue timeout)", ["pool", "reason"])
ADMISSION_SOURCES: set = set()
"""Live `PoolAdmission` objects (they add and remove themselves); read at scrape time."""


class _AdmissionCollector:
    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        immediate = CounterMetricFamily("switchyard_admission_immediate", "Requests admitted without waiting",
                                        labels=["pool"])
        queued = GaugeMetricFamily("switchyard_admission_queued_requests", "Requests waiting for capacity",
                                   labels=["pool"])
        queued_tokens = GaugeMetricFamily("switchyard_admission_queued_tokens", "Tokens of the waiting requests",
                                          labels=["pool"])
        outstanding = GaugeMetricFamily("switchyard_admission_outstanding_tokens",
                                        "Tokens of the requests in flight on a member", labels=["pool", "member"])
        in_flight = GaugeMetricFamily("switchyard_admission_outstanding_requests",
                                      "Requests in flight on a member", labels=["pool", "member"])
        cap = GaugeMetricFamily("switchyard_admission_capacity_tokens", "A member's outstanding-token cap",
                                labels=["pool", "member"])
        # A pool being replaced by a reload and its successor share a name for a moment: sum them.
        sums: dict[tuple, list[float]] = {}
        for source in list(ADMISSION_SOURCES):
            snap = source.snapshot()
            pool = snap["pool"]
            row = sums.setdefault((pool,), [0, 0, 0])
            row[0] += snap["queued_requests"]
            row[1] += snap["queued_tokens"]
            row[2] += snap["immediate"]
            for m in snap["members"]:
                mrow = sums.setdefault((pool, m["member"]), [0, 0, 0])
                mrow[0] += m["tokens"]
                mrow[1] += m["requests"]
                mrow[2] = m["cap"]
        for labels, row in sums.items():
            if len(labels) == 1:
                queued.add_metric(list(labels), row[0])
                queued_tokens.add_metric(list(labels), row[1])
                immediate.add_metric(list(labels), row[2])
            else:
                outstanding.add_metric(list(labels), row[0])
                in_flight.add_metric(list(labels), row[1])
                cap.add_metric(list(labels), row[2])
        return [immediate, queued, queued_tokens, outstanding, in_flight, cap]

    def describe(self):
        return []


from prometheus_client import REGISTRY as _REGISTRY  # noqa: E402

_REGISTRY.register(_AdmissionCollector())
