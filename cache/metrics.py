"""Prometheus metrics of the cache (process-wide, default registry) and per-tenant stats for /admin.

Prometheus gets counters and a histogram; the admin API gets a per-tenant view of this replica
(hit ratios and recent lookup latency percentiles) that needs no Prometheus server to read.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np
from prometheus_client import Counter as PromCounter
from prometheus_client import Gauge, Histogram

LOOKUPS = PromCounter("switchyard_cache_lookups_total", "Cache lookups by tenant and result",
                      ["tenant", "result"])
GUARD_REJECTIONS = PromCounter("switchyard_cache_guard_rejections_total",
                               "Semantic candidates above the threshold refused by the near-miss guard",
                               ["tenant", "reason"])
LOOKUP_SECONDS = Histogram(
    "switchyard_cache_lookup_seconds", "Cache lookup latency (exact + semantic search + guard; encode excluded)",
    ["result"], buckets=(0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25),
)
STORES = PromCounter("switchyard_cache_stores_total", "Answers stored in the cache", ["tenant"])
ENTRIES = Gauge("switchyard_cache_entries", "Entries in this replica's semantic index", ["tenant"])
REDIS_UP = Gauge("switchyard_cache_redis_up", "1 when the Redis cache store is reachable, 0 when not "
                 "(absent with the in-memory store)")


@dataclass
class TenantStats:
    results: Counter = field(default_factory=Counter)
    guard_rejections: Counter = field(default_factory=Counter)
    latencies: deque = field(default_factory=lambda: deque(maxlen=4096))

    def record(self, result: str, seconds: float) -> None:
        self.results[result] += 1
        self.latencies.append(seconds)

    def snapshot(self) -> dict:
        lookups = sum(self.results.values())
        consulted = lookups - self.results["bypass"]
        lat = np.asarray(self.latencies, dtype=np.float64) * 1000
        return {
            "lookups": lookups,
            "results": dict(self.results),
            "hit_ratio": {
                "exact": self.results["hit-exact"] / consulted if consulted else 0.0,
                "semantic": self.results["hit-semantic"] / consulted if consulted else 0.0,
                "total": (self.results["hit-exact"] + self.results["hit-semantic"]) / consulted if consulted else 0.0,
            },
            "guard_rejections": dict(self.guard_rejections),
            "lookup_latency_ms": {
                "p50": float(np.percentile(lat, 50)) if lat.size else None,
                "p99": float(np.percentile(lat, 99)) if lat.size else None,
                "samples": int(lat.size),
            },
        }
