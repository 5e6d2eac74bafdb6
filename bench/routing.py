"""Routing benchmark: classifier quality on the held-out split, its latency, and what routing saves.

    python bench/routing.py [--latency-runs 3000] [--embed-runs 200]

Prints, in one run:
1. accuracy, macro accuracy (mean per-class recall), macro-F1, per-class report, calibration error and
   the confusion matrix of the shipped ONNX classifier on the held-out split (never trained on), side by
   side with a standalone lexical baseline (TF-IDF + logistic regression on the same training split);
2. the classifier's latency alone over a precomputed (shared) embedding, and including the embedding
   with the gateway's encoder (`cache.encoder`, ONNX) and with sentence-transformers on torch;
3. a cost table: for a realistic traffic mix, the share of requests each routing policy keeps off the
   large model versus always-large, the relative cost, and how often a prompt that needs a bigger model
   lands on the small one (the quality risk).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classifiers import metrics  # noqa: E402
from classifiers.embed import embed, load_encoder  # noqa: E402
from classifiers.runtime import PromptClassifier  # noqa: E402
from classifiers.train import load_records  # noqa: E402
from policies.routing import decide_route, embedded_default  # noqa: E402
from policies.schema import RoutingPolicy  # noqa: E402

# A customer-facing assistant's traffic (support questions dominate; writing, code and maths follow).
MIX = {"simple": 0.50, "complex": 0.22, "code": 0.16, "math": 0.12}
# Relative price per token of each pool (an ~8B model, a mid-size code model, a ~70B model).
PRICE = {"small": 0.1, "code": 0.3, "large": 1.0}
# Typical answer length per class, in tokens.
OUTPUT_TOKENS = {"simple": 60, "complex": 600, "code": 350, "math": 250}
# Which pools are good enough for each true class; anything else is under-routed.
ADEQUATE = {"simple": {"small", "code", "large"}, "complex": {"large"}, "code": {"code", "large"}, "math": {"large"}}

THREE_POOLS = RoutingPolicy.model_validate(
    {
        "rules": [
            {"name": "simple-to-small", "when": {"classes": ["simple"]}, "pool": "small"},
            {"name": "code-to-code", "when": {"classes": ["code"]}, "pool": "code", "escalate_to": ["large"]},
        ],
        "default_pool": "large",
        "cascade": {"ladder": ["small", "large"], "min_confidence": 0.6},
    }
)
POLICIES = {
    "always large": None,
    "embedded default (small/large, cascade < 0.6)": embedded_default(),
    "small/code/large (cascade < 0.6)": THREE_POOLS,
}


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1e3, q))


def timed(fn, runs: int, desc: str) -> list[float]:
    out = []
    for i in tqdm(range(runs), desc=desc, unit="call", leave=False):
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    return out


def lexical_baseline(train: list[dict], test: list[dict], labels: tuple[str, ...]) -> np.ndarray | None:
    """A standalone model that needs no embedding: word + character n-gram TF-IDF, logistic regression."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline, make_union
    except ImportError:
        return None
    model = make_pipeline(
        make_union(
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1),
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2),
        ),
        LogisticRegression(max_iter=2000, C=10.0, class_weight="balanced"),
    )
    model.fit([r["text"] for r in train], [r["label"] for r in train])
    pred = model.predict([r["text"] for r in test])
    return np.array([labels.index(p) for p in pred])


def estimate_tokens(text: str) -> int:
    return max(1, round(len(text.split()) * 1.3))


def cost_table(records: list[dict], decisions: list[tuple[str, float]], labels: tuple[str, ...]) -> str:
    by_class: dict[str, list[int]] = {c: [] for c in labels}
    for i, r in enumerate(records):
        by_class[r["label"]].append(i)
    pools = ("small", "code", "large")
    lines = [
        f"{'policy':<46}{'small':>7}{'code':>7}{'large':>7}{'off large':>11}{'rel. cost':>11}{'under-routed':>14}"
    ]
    for name, policy in POLICIES.items():
        share = dict.fromkeys(pools, 0.0)
        cost = under = 0.0
        for cls, weight in MIX.items():
            idx = by_class[cls]
            for i in idx:
                r = records[i]
                tokens = estimate_tokens(r["text"])
                if policy is None:
                    pool = "large"
                else:
                    label, conf = decisions[i]
                    pool = decide_route(
                        policy, "auto", model_pools={"auto": "large"}, available_pools=pools,
                        task_class=label, confidence=conf, prompt_tokens=tokens,
                    ).pool
                w = weight / len(idx)
                share[pool] += w
                cost += w * PRICE[pool] * (tokens + OUTPUT_TOKENS[cls])
                under += w * (pool not in ADEQUATE[cls])
        if policy is None:
            baseline = cost
        lines.append(
            f"{name:<46}{share['small']:>7.1%}{share['code']:>7.1%}{share['large']:>7.1%}"
            f"{share['small'] + share['code']:>11.1%}{cost / baseline:>11.2f}{under:>14.1%}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency-runs", type=int, default=3000)
    ap.add_argument("--embed-runs", type=int, default=200)
    args = ap.parse_args()

    records = load_records()
    train = [r for r in records if r["split"] == "train"]
    held = [r for r in records if r["split"] == "heldout"]
    clf = PromptClassifier()
    labels = clf.labels
    y = np.array([labels.index(r["label"]) for r in held])

    print(f"held-out split: {len(held)} prompts in {len({r['group'] for r in held})} groups "
          f"(templates, fillers and conversations never seen in training); train split {len(train)}")
    print(f"classifier: {clf.path.name} ({clf.path.stat().st_size / 1024:.0f} KiB), {clf.meta['head']} head, "
          f"temperature {clf.temperature:.3f}, providers {clf.providers}")
    encoder = load_encoder()
    x = embed(encoder, [r["text"] for r in held], progress=True)
    probs = clf.probabilities(x)
    pred = probs.argmax(axis=1)

    # --- 1. quality ---------------------------------------------------------------------------
    m = metrics.confusion(y, pred, len(labels))
    print("\n== held-out quality: MiniLM embedding + ONNX head ==")
    print(metrics.format_report(m, labels))
    print(f"expected calibration error {metrics.ece(probs, y):.3f}  "
          f"(confidence ≥ 0.6 on {np.mean(probs.max(axis=1) >= 0.6):.1%} of prompts, "
          f"accuracy there {np.mean((pred == y)[probs.max(axis=1) >= 0.6]):.1%})")
    print(metrics.format_confusion(m, labels))
    kinds = sorted({r["kind"] for r in held})
    print("by kind: " + "   ".join(
        f"{k} {np.mean([(p == t) for p, t, r in zip(pred, y, held) if r['kind'] == k]):.1%}"
        f" (n={sum(r['kind'] == k for r in held)})" for k in kinds))

    base = lexical_baseline(train, held, labels)
    rows = [("MiniLM + ONNX head (shipped)", m)]
    if base is not None:
        rows.append(("TF-IDF + logistic regression (standalone)", metrics.confusion(y, base, len(labels))))
    print("\n== side by side ==")
    print(f"{'model':<44}{'accuracy':>10}{'macro acc':>11}{'macro-F1':>10}")
    for name, cm in rows:
        print(f"{name:<44}{metrics.accuracy(cm):>10.3f}{metrics.macro_accuracy(cm):>11.3f}{metrics.macro_f1(cm):>10.3f}")

    # --- 2. latency ---------------------------------------------------------------------------
    print(f"\n== latency, one request at a time (os.cpu_count()={os.cpu_count()}, load {os.getloadavg()[0]:.1f}) ==")
    for i in range(50):  # warm up
        clf.classify(x[i % len(x)])
    alone = timed(lambda i: clf.classify(x[i % len(x)]), args.latency_runs, "classify")
    rows = [("classifier over the shared embedding", alone)]
    texts = [r["text"] for r in held]
    # torch first: onnxruntime's spinning worker threads would otherwise slow it down on 2 cores.
    rows.append(("embed (sentence-transformers, torch) + classify",
                 timed(lambda i: clf.classify(embed(encoder, [texts[i % len(texts)]])[0]), args.embed_runs, "torch encoder")))
    try:
        from cache.encoder import load_runtime
    except ImportError:
        load_runtime = None
    if load_runtime is not None:
        runtime = load_runtime("onnx")
        runtime.encode(texts[:4])
        rows.append((f"embed ({runtime.name}, cache.encoder) + classify",
                     timed(lambda i: clf.classify(runtime.encode([texts[i % len(texts)]])[0]), args.embed_runs, "gateway encoder")))
    print(f"{'path':<50}{'runs':>6}{'p50 ms':>9}{'p99 ms':>9}{'mean ms':>9}")
    for name, t in rows:
        print(f"{name:<50}{len(t):>6}{pct(t, 50):>9.3f}{pct(t, 99):>9.3f}{np.mean(t) * 1e3:>9.3f}")

    # --- 3. cost ------------------------------------------------------------------------------
    print("\n== routing cost on the held-out split, weighted to a realistic mix ==")
    print("mix " + ", ".join(f"{k} {v:.0%}" for k, v in MIX.items())
          + "; price per token " + ", ".join(f"{k} {v}" for k, v in PRICE.items())
          + "; output tokens " + ", ".join(f"{k} {v}" for k, v in OUTPUT_TOKENS.items()))
    decisions = [(labels[int(i)], float(p.max())) for i, p in zip(pred, probs)]
    print(cost_table(held, decisions, labels))
    print("under-routed: share of all requests sent to a pool too small for their true class "
          "(before any escalation on failure or refusal)")


if __name__ == "__main__":
    main()
