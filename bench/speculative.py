"""Speculative decoding vs. target-only greedy decoding, side by side in one run.

    python bench/speculative.py                       # shipped target + draft, held-out prompts
    python bench/speculative.py --model DIR --draft DIR --prompts 30 --max-tokens 128

Every prompt is decoded greedily by each method in turn (round-robin, so load from other processes
hits all methods alike); tokens/s is total generated tokens over total decode time per method.
Methods: the target alone; the draft model with adaptive k; the draft model at fixed k (the sweep);
prompt-lookup (n-gram) drafting. Every method's output must equal the target's token for token.
Prints a table and writes a PNG plot (default bench/out/speculative.png).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass
class Method:
    label: str
    speculation: str
    k: int | None
    seconds: float = 0.0
    tokens: int = 0
    proposed: int = 0
    accepted: int = 0
    passes: int = 0
    rounds: int = 0
    mismatches: int = 0
    outputs: list[list[int]] = field(default_factory=list)

    @property
    def tps(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    @property
    def acceptance(self) -> float | None:
        return self.accepted / self.proposed if self.proposed else None

    @property
    def mean_accepted_length(self) -> float | None:
        return (self.accepted + self.rounds) / self.rounds if self.rounds else None


def decode(worker, model: str, ids: list[int], method: Method, max_tokens: int):
    from backends.engine import GenerationRequest, SamplingParams, Submission

    req = GenerationRequest(
        request_id="bench",
        model=model,
        prompt_ids=ids,
        params=SamplingParams(max_tokens=max_tokens, temperature=0.0),
        speculation=method.speculation,  # type: ignore[arg-type]
        num_speculative_tokens=method.k,
    )
    seq = worker.prepare(Submission(req, emit=lambda e: None))
    worker.step(seq)  # prefill: not part of decode speed
    t = time.perf_counter()
    while not worker.step(seq):
        pass
    return seq, time.perf_counter() - t


def plot(methods: list[Method], base: Method, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = [m for m in methods if m.speculation == "draft" and m.k is not None]
    ks = [m.k for m in sweep]
    fig, ax1 = plt.subplots(figsize=(7, 4.2))
    ax1.plot(ks, [m.tps / base.tps for m in sweep], "o-", color="tab:blue", label="speedup (fixed k)")
    for m, style in ((next((x for x in methods if x.label == "draft, adaptive k"), None), "--"),
                     (next((x for x in methods if x.speculation == "ngram"), None), ":")):
        if m is not None:
            ax1.axhline(m.tps / base.tps, linestyle=style, color="tab:gray", label=f"speedup ({m.label})")
    ax1.axhline(1.0, color="black", linewidth=0.8)
    ax1.set_xlabel("draft tokens per round (k)")
    ax1.set_ylabel("tokens/s vs target alone")
    ax2 = ax1.twinx()
    ax2.plot(ks, [m.acceptance or 0 for m in sweep], "s-", color="tab:orange", label="acceptance rate")
    ax2.set_ylabel("acceptance rate")
    ax2.set_ylim(0, 1.05)
    lines = ax1.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax1.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="lower right", fontsize=8)
    ax1.set_title("Speculative decoding, greedy, held-out prompts")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="target directory (default: shipped target)")
    ap.add_argument("--draft", type=Path, help="draft directory (default: shipped draft)")
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--ks", default="1,2,3,4,5,6,8")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is steadiest on a shared CPU)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device")
    ap.add_argument("--plot", type=Path, default=ROOT / "bench" / "out" / "speculative.png")
    args = ap.parse_args(argv)

    import torch
    from tqdm import tqdm

    from backends.engine import build_engine
    from backends.models import bundled_models
    from backends.models.heldout import heldout_prompts

    torch.set_num_threads(args.threads)
    shipped = bundled_models()
    engine = build_engine(args.model or shipped["target"], args.draft or shipped["draft"], name="m", device=args.device)
    served = engine.models["m"]
    worker = engine.worker
    prompts = heldout_prompts(served.target.tokenizer, args.prompts, args.seed)

    methods = [Method("target only", "none", None), Method("draft, adaptive k", "draft", None)]
    methods += [Method(f"draft, k={k}", "draft", k) for k in map(int, args.ks.split(","))]
    methods += [Method("prompt lookup, adaptive k", "ngram", None)]
    base = methods[0]

    for m in methods:  # warm-up: first passes allocate and pick kernels
        decode(worker, "m", prompts[0][1], m, 8)
    for _, ids in tqdm(prompts, desc="prompts", unit="prompt"):
        for m in methods:
            seq, seconds = decode(worker, "m", ids, m, args.max_tokens)
            m.seconds += seconds
            m.tokens += len(seq.completion)
            m.proposed += seq.stats.proposed
            m.accepted += seq.stats.accepted
            m.passes += seq.stats.target_passes
            m.rounds += seq.stats.rounds_with_drafts
            m.outputs.append(seq.completion)
    for m in methods[1:]:
        m.mismatches = sum(a != b for a, b in zip(m.outputs, base.outputs))

    t, d = served.target, served.draft
    print(
        f"\ntarget {t.path.name}: {t.num_layers} layers, {sum(p.numel() for p in t.model.parameters()) / 1e6:.1f}M params; "
        f"draft {d.path.name}: {d.num_layers} layers, {sum(p.numel() for p in d.model.parameters()) / 1e6:.1f}M params; "
        f"device {t.device}, {torch.get_num_threads()} thread(s)"
    )
    print(f"{len(prompts)} held-out prompts, greedy, up to {args.max_tokens} new tokens each\n")
    header = f"{'method':<28}{'tokens/s':>10}{'speedup':>9}{'accept':>8}{'mean acc len':>14}{'target passes':>15}{'identical':>11}"
    print(header)
    print("-" * len(header))
    for m in methods:
        acc = f"{m.acceptance:.3f}" if m.acceptance is not None else "-"
        mal = f"{m.mean_accepted_length:.2f}" if m.mean_accepted_length is not None else "-"
        same = "-" if m is base else ("yes" if not m.mismatches else f"NO ({m.mismatches})")
        print(f"{m.label:<28}{m.tps:>10.1f}{m.tps / base.tps:>8.2f}x{acc:>8}{mal:>14}{m.passes:>15}{same:>11}")
    plot(methods, base, args.plot)
    print(f"\nplot: {args.plot}")
    return 1 if any(m.mismatches for m in methods[1:]) else 0


if __name__ == "__main__":
    sys.exit(main())
