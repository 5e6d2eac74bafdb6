"""Semantic-cache quality on the hand-labelled groups in cache/data/: threshold sweep, with and without
the near-miss guard, through the real CacheService (in-memory store, real encoder).

Protocol per split: every group's question is stored (one tenant, one request context), then each
paraphrase and each near-miss is looked up.
  paraphrase hit rate = paraphrases answered with their own group's entry
  false-hit rate      = near-misses answered with any entry but an exact hit (a near-miss that is word for
                        word another group's question gets that question's answer, which is right)
  precision           = right hits / all hits
A harder variant ("rotated") stores the first paraphrase instead of the question, so near-misses
(written as edits of the question) also differ in wording from what is cached.

Splits (cache/data/README.md): dev (the guard was designed on it), heldout (never tuned on), probe_a (an
adversarial set written against the guard; stop 20's checks were designed on its failures), probe_b
(adversarial, written after those checks and not tuned on), probe_c (adversarial; stop 21's second half
was designed on it), probe_d to probe_z and probe_aa (written by hands that read no code; each measured once
before any change it prompted; probe_u, probe_w and probe_y only after their stop's readings). Then the context
pairs (cache/data/pairs_context.txt): questions that open with context about the asker against cached
questions without it, some of whose answers the context changes.

    python bench/cache_quality.py [--plot bench/results/cache_quality.png] [--cross-encoder PATH]

The learned rows (rules + learned verifier, the shipped default) use the cross-encoder when its model file exists
(cache/model/cross_encoder.safetensors, or --cross-encoder PATH), else the gradient-boosted trees.
The trees are fitted on the train split and probes A-W (cache/evalset.py TRAINING_PROBES): for those
splits the learned rows are in-sample; dev chose the trees' cuts; held-out and probes X, Y, Z, AA were never
trained on.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

import numpy as np
import structlog
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cache import cross_encoder, guard  # noqa: E402
from cache.encoder import Encoder  # noqa: E402
from cache.evalset import SPLITS, load_groups, load_pairs  # noqa: E402
from cache.service import CacheService  # noqa: E402
from cache.stores.memory import MemoryStore  # noqa: E402
from policies.schema import CachePolicy  # noqa: E402

THRESHOLDS = [round(t, 2) for t in np.arange(0.50, 0.96, 0.05)]
SHIPPED = CachePolicy()


def body(text: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}], "temperature": 0}


async def evaluate(encoder: Encoder, split: str, thresholds: list[float], verify: bool, rotated: bool,
                   vectors: dict[str, np.ndarray], bar: tqdm, rules_only: bool = False) -> list[dict]:
    groups = load_groups(split)
    options = {"verifier": guard.verify_rules} if rules_only else {}
    service = CacheService(MemoryStore(), encoder, **options)
    await service.start()
    policy = CachePolicy(threshold=0.0, verify=verify, learned_verifier=not rules_only)
    cached_ids = []
    for group in groups:
        cached = group.paraphrases[0] if rotated else group.query
        cached_ids.append(await service.store("bench", policy, "chat", body(cached), vectors[cached], f"answer {len(cached_ids)}",
                                              "stop", {}, "m"))
    rows = []
    for threshold in thresholds:
        policy = CachePolicy(threshold=threshold, verify=verify, learned_verifier=not rules_only)
        right = wrong_para = para = near_hits = near = 0
        for gi, group in enumerate(groups):
            cached = group.paraphrases[0] if rotated else group.query
            askers = [p for p in [group.query, *group.paraphrases] if p != cached]
            for text in askers:
                look = await service.lookup("bench", policy, "chat", body(text), vectors[text])
                para += 1
                if look.hit is not None:
                    if look.hit.entry_id == cached_ids[gi]:
                        right += 1
                    else:
                        wrong_para += 1
            for _, text in group.near_misses:
                look = await service.lookup("bench", policy, "chat", body(text), vectors[text])
                near += 1
                # a near-miss written exactly as another group's question is answered right by its exact hit
                near_hits += look.hit is not None and look.hit.kind != "exact"
            bar.update(1)
        hits = right + wrong_para + near_hits
        rows.append({"split": split, "rotated": rotated, "verify": verify, "rules_only": rules_only, "threshold": threshold,
                     "hit_rate": right / para, "false_hit_rate": near_hits / near, "wrong_paraphrase_hits": wrong_para,
                     "precision": right / hits if hits else 1.0, "paraphrases": para, "near_misses": near})
    await service.aclose()
    return rows


async def context_pairs(encoder: Encoder, vectors: dict[str, np.ndarray]) -> list[str]:
    """cache/data/pairs_context.txt through the service at the shipped default and threshold-only: every
    cached question stored, each question with context looked up. SAME pairs should be answered with
    their own entry; a DIFF pair answered with any entry is a wrong answer, unless the file labels that
    entry SAME for the same question ("I'm on a Mac. How do I take a screenshot?" is DIFF against "How
    do I take a screenshot?" and SAME against "How do I take a screenshot on a Mac?")."""
    pairs = load_pairs()
    right_for: dict[str, set[str]] = {}
    for label, query, cached in pairs:
        if label == "SAME":
            right_for.setdefault(query, set()).add(cached)
    lines = []
    for verify in (True, False):
        service = CacheService(MemoryStore(), encoder)
        await service.start()
        policy = CachePolicy(threshold=SHIPPED.threshold, verify=verify)
        ids = {}
        for _, _, cached in pairs:
            if cached not in ids:
                ids[cached] = await service.store("bench", policy, "chat", body(cached), vectors[cached], "answer",
                                                  "stop", {}, "m")
        same = served_same = diff = served_diff = 0
        for label, query, cached in pairs:
            look = await service.lookup("bench", policy, "chat", body(query), vectors[query])
            if label == "SAME":
                same += 1
                served_same += look.hit is not None and look.hit.entry_id == ids[cached]
            else:
                diff += 1
                right = {ids[c] for c in right_for.get(query, ())}
                served_diff += look.hit is not None and look.hit.entry_id not in right
        await service.aclose()
        what = "shipped default" if verify else "threshold only"
        lines.append(f"context pairs, {what} (threshold {SHIPPED.threshold}): SAME served {served_same}/{same} "
                     f"({served_same / same:.1%}), DIFF served {served_diff}/{diff} ({served_diff / diff:.1%})")
    return lines


def verifier_latency(vectors: dict[str, np.ndarray]) -> list[str]:
    """Time of one guard call per (lookup, candidate) pair the index offers at the shipped threshold,
    cold (text analysis caches cleared before each pair's first call) and warm (cached entry texts);
    and the learned model alone on the pairs that reach it (one pair per call, as on the hit path)."""
    import time

    pairs = []
    for split in ("dev", "heldout"):
        groups = load_groups(split)
        stored = [g.query for g in groups]
        matrix = np.array([vectors[t] for t in stored])
        for g in groups:
            for text in [*g.paraphrases, *(x for _, x in g.near_misses)]:
                sims = matrix @ vectors[text]
                pairs += [(text, stored[k]) for k in np.argsort(-sims)[:4] if sims[k] >= SHIPPED.threshold]
    model = guard.learned_model()
    second = [(q, c) for q, c in pairs if not guard.verify_rules(q, c).hard_veto]
    lines = []
    for name, verify in (("rules only", guard.verify_rules), ("rules + learned verifier", guard.verify)):
        out = []
        for label, clear in (("cold", True), ("warm", False)):
            times = []
            for query, cached in pairs:
                if clear:
                    guard.clear_text_caches()
                started = time.perf_counter()
                verify(query, cached)
                times.append((time.perf_counter() - started) * 1000)
            t = np.array(times)
            out.append(f"{label}: p50 {np.percentile(t, 50):.3f} ms, p99 {np.percentile(t, 99):.3f} ms")
        lines.append(f"guard latency per candidate, {name} ({len(pairs)} pairs, {len(second)} reach the model): "
                     + "; ".join(out))
    if model is not None and second:
        times = []
        for query, cached in second:
            started = time.perf_counter()
            model.prob(query, cached)
            times.append((time.perf_counter() - started) * 1000)
        t = np.array(times)
        lines.append(f"learned model alone ({model_name(model)}), per call: p50 {np.percentile(t, 50):.3f} ms, "
                     f"p99 {np.percentile(t, 99):.3f} ms")
    return lines


def model_name(model) -> str:
    if isinstance(model, cross_encoder.CrossEncoderVerifier):
        return (f"cross-encoder, {model.meta['layers']} layers, {model.runtime}, "
                f"{model.threads} intra-op thread(s)")
    return "gradient-boosted trees"


def table(rows: list[dict], title: str) -> str:
    lines = [title, f"{'threshold':>9} | {'guard':>5} | {'para hit':>8} | {'false hit':>9} | {'precision':>9}",
             "-" * 54]
    for r in rows:
        lines.append(f"{r['threshold']:>9.2f} | {'on' if r['verify'] else 'off':>5} | {r['hit_rate']:>8.1%} | "
                     f"{r['false_hit_rate']:>9.1%} | {r['precision']:>9.1%}")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 4
    rows_n = -(-len(SPLITS) // cols)
    fig, grid = plt.subplots(rows_n, cols, figsize=(5.5 * cols, 4 * rows_n), sharey=True, squeeze=False)
    axes = list(grid.flat)
    for ax in axes[len(SPLITS):]:
        ax.set_visible(False)  # a grid cell with no split
    for ax, split in zip(axes, SPLITS):
        for verify, style in ((False, "--"), (True, "-")):
            sel = [r for r in rows if r["split"] == split and r["verify"] == verify and not r["rotated"]]
            t = [r["threshold"] for r in sel]
            label = "guard" if verify else "threshold only"
            ax.plot(t, [r["hit_rate"] for r in sel], "g" + style, label=f"paraphrase hit ({label})")
            ax.plot(t, [r["false_hit_rate"] for r in sel], "r" + style, label=f"near-miss false hit ({label})")
        ax.axvline(SHIPPED.threshold, color="grey", lw=0.8)
        ax.set_title(f"{split} split")
        ax.set_xlabel("cosine threshold")
        ax.grid(alpha=0.3)
    for row in grid:
        row[0].set_ylabel("rate")
    axes[1].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", default="bench/results/cache_quality.png", help="where to write the plot ('' for none)")
    parser.add_argument("--cross-encoder", default=None, help="cross-encoder model file for the learned rows "
                        f"(default: {cross_encoder.MODEL_PATH})")
    args = parser.parse_args()
    if args.cross_encoder:
        cross_encoder.MODEL_PATH = Path(args.cross_encoder).resolve()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # the tables, not an info line for each of the ~60 services the runs start
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    encoder = Encoder.load()
    texts = sorted({t for s in SPLITS for g in load_groups(s)
                    for t in [g.query, *g.paraphrases, *(x for _, x in g.near_misses)]}
                   | {t for _, query, cached in load_pairs() for t in (query, cached)})
    vectors = dict(zip(texts, encoder.embed_many(texts)))
    runs = [(s, v, False, THRESHOLDS, False) for s in SPLITS for v in (False, True)]
    runs += [(s, True, True, [SHIPPED.threshold], False) for s in SPLITS]
    runs += [(s, True, r, [SHIPPED.threshold], True) for s in SPLITS for r in (False, True)]
    total = sum(len(load_groups(s)) * len(t) for s, _, _, t, _ in runs)
    rows: list[dict] = []
    with tqdm(total=total, desc="lookups (groups x thresholds)", unit="group") as bar:
        for split, verify, rotated, thresholds, rules_only in runs:
            rows += await evaluate(encoder, split, thresholds, verify, rotated, vectors, bar, rules_only)
    for split in SPLITS:
        sel = [r for r in rows if r["split"] == split and not r["rotated"] and not r["rules_only"]]
        n = sel[0]
        print()
        print(table(sorted(sel, key=lambda r: (r["verify"], r["threshold"])),
                    f"== {split}: {len(load_groups(split))} groups, {n['paraphrases']} paraphrases, "
                    f"{n['near_misses']} near-misses =="))
    model = guard.learned_model()
    describe = (f"rules + learned verifier ({model_name(model) if model else 'none loaded'}"
                + (f", veto p < {model.veto_cut:.2f}, accept p >= {model.threshold:.2f})" if model else ")"))
    sections = [(not SHIPPED.learned_verifier, "shipped default", describe if SHIPPED.learned_verifier else "rules only"),
                (SHIPPED.learned_verifier, "for comparison", "rules only" if SHIPPED.learned_verifier else describe)]
    for rules_only, title, what in sections:
        print(f"\n== {title}: threshold {SHIPPED.threshold}, guard on, {what} ==")
        for r in rows:
            if r["threshold"] == SHIPPED.threshold and r["verify"] and r["rules_only"] == rules_only:
                name = f"{r['split']}{' (rotated)' if r['rotated'] else ''}"
                print(f"{name:>18}: paraphrase hit {r['hit_rate']:.1%}, false hit {r['false_hit_rate']:.1%}, "
                      f"precision {r['precision']:.1%}, wrong-entry paraphrase hits {r['wrong_paraphrase_hits']}")
    for split in SPLITS:
        base = [r for r in rows if r["split"] == split and not r["verify"] and not r["rotated"]]
        best = max((r for r in base if r["hit_rate"] >= 0.9), key=lambda r: r["threshold"], default=None)
        if best:
            print(f"{split:>18}: threshold-only baseline needs threshold {best['threshold']} for >=90% paraphrase hits "
                  f"({best['hit_rate']:.1%}) and then serves {best['false_hit_rate']:.1%} of near-misses "
                  f"(precision {best['precision']:.1%})")
    if not cross_encoder.MODEL_PATH.exists():
        print(f"(no cross-encoder model at {cross_encoder.MODEL_PATH}: train one with "
              f"`python -m cache.train_cross_encoder`; the learned rows use the trees)")
    for line in await context_pairs(encoder, vectors):
        print(line)
    for line in verifier_latency(vectors):
        print(line)
    if args.plot:
        plot([r for r in rows if not r["rules_only"]], Path(args.plot))
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    asyncio.run(main())
