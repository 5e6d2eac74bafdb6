"""The trace format: one JSON object per line.

    {"t": 0.412, "tenant": "acme", "prompt": "...", "prompt_tokens": 31, "max_tokens": 64,
     "output_tokens": 57}

`t` is the arrival offset in seconds from the start of the trace. A record carries the prompt as
text (`prompt`), as token ids (`prompt_ids`), or only as a count (`prompt_tokens`, in which case the
replayer makes a filler prompt of about that size). `output_tokens` is what was observed, when known.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass(slots=True)
class TraceRecord:
    t: float
    tenant: str = "default"
    prompt: str | None = None
    prompt_ids: list[int] | None = None
    prompt_tokens: int | None = None
    max_tokens: int = 64
    output_tokens: int | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> str:
        d = {k: v for k, v in asdict(self).items() if v not in (None, {})}
        return json.dumps(d, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict) -> TraceRecord:
        known = {k: d[k] for k in ("t", "tenant", "prompt", "prompt_ids", "prompt_tokens", "max_tokens", "output_tokens") if k in d}
        rec = cls(**known)
        rec.extra = {k: v for k, v in d.items() if k not in known and k != "extra"} | d.get("extra", {})
        if rec.prompt is None and rec.prompt_ids is None and rec.prompt_tokens is None:
            raise ValueError("a trace record needs prompt, prompt_ids or prompt_tokens")
        return rec

    @property
    def n_prompt(self) -> int:
        if self.prompt_tokens is not None:
            return self.prompt_tokens
        if self.prompt_ids is not None:
            return len(self.prompt_ids)
        return max(1, len(self.prompt or "") // 4)


def size_class(prompt_tokens: int, max_tokens: int) -> str:
    """short: a chat turn (prompt <= 64 and output <= 64); long: prompt > 256 or output > 128;
    medium: the rest."""
    if prompt_tokens <= 64 and max_tokens <= 64:
        return "short"
    if prompt_tokens > 256 or max_tokens > 128:
        return "long"
    return "medium"


SIZE_CLASSES = ("short", "medium", "long")


def read_trace(path: str | Path) -> list[TraceRecord]:
    out = []
    for n, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(TraceRecord.from_dict(json.loads(line)))
        except (ValueError, TypeError) as e:
            raise ValueError(f"{path}:{n}: {e}") from None
    out.sort(key=lambda r: r.t)
    return out


def write_trace(records: list[TraceRecord], path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(r.to_json() + "\n" for r in records))
