"""`switchyard trace extract`: the gateway's own request log lines -> a trace.

Reads JSON lines (other lines are skipped), keeps those with `"event": "request"`, and turns each
into a record: arrival = `timestamp` (written when the request finished) minus `total_ms`, relative
to the first arrival; `prompt_tokens`, `max_tokens` (else the observed `completion_tokens`),
`output_tokens` = `completion_tokens`, `tenant`. The prompt text is kept when the tenant opted in to
prompt logging (`messages`), otherwise only its size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from backends.traces.format import TraceRecord


def _ts(value) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def extract(lines: Iterable[str]) -> tuple[list[TraceRecord], int]:
    """Records, and how many request lines were skipped (no timestamp or no token counts)."""
    rows, skipped = [], 0
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        if d.get("event") != "request":
            continue
        ts, prompt_tokens = _ts(d.get("timestamp")), d.get("prompt_tokens")
        if ts is None or not prompt_tokens:
            skipped += 1
            continue
        arrival = ts - (d.get("total_ms") or 0.0) / 1000
        completion = d.get("completion_tokens")
        max_tokens = d.get("max_tokens") or completion or 64
        prompt = None
        msgs = d.get("messages")
        if isinstance(msgs, str):
            prompt = msgs
        elif isinstance(msgs, list):
            prompt = "\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in msgs if isinstance(m, dict))
        rows.append((arrival, TraceRecord(t=0.0, tenant=d.get("tenant") or "default", prompt=prompt,
                                          prompt_tokens=int(prompt_tokens), max_tokens=int(max_tokens),
                                          output_tokens=completion)))
    rows.sort(key=lambda x: x[0])
    if rows:
        t0 = rows[0][0]
        for arrival, rec in rows:
            rec.t = round(arrival - t0, 4)
    return [r for _, r in rows], skipped
