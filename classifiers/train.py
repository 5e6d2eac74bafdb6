"""Train the prompt classifier head over MiniLM embeddings and export it to ONNX.

    python -m classifiers.train [--seed 6]

Reads `classifiers/data/prompts.jsonl`, uses only the `train` split (the `heldout` split is for
`bench/routing.py` and the tests, never seen here), and splits it again by group into a fit part and
a calibration part. Several small heads are fitted; the one with the best calibration macro-F1 is kept,
its temperature is fitted on the calibration part, and the result is written to
`classifiers/model/prompt_classifier.onnx` + `.json` (labels, temperature, metrics). Deterministic for a
seed on the CPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn
from tqdm import tqdm

from classifiers import metrics
from classifiers.embed import DIM, EMBEDDING_MODEL, embed, load_encoder
from classifiers.export import head_to_onnx
from classifiers.runtime import MODEL_PATH, PromptClassifier

DATA_PATH = Path(__file__).with_name("data") / "prompts.jsonl"
LABELS = ("simple", "complex", "code", "math")
CAL_SHARE = 0.15


@dataclass(frozen=True)
class Candidate:
    name: str
    hidden: int  # 0 = linear (multinomial logistic regression)
    weight_decay: float
    epochs: int
    lr: float


CANDIDATES = (
    Candidate("linear", 0, 1e-4, 400, 2e-2),
    Candidate("mlp-128", 128, 1e-2, 300, 3e-3),
    Candidate("mlp-256", 256, 1e-2, 300, 3e-3),
)


def load_records(path: Path = DATA_PATH) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def calibration_groups(records: list[dict], seed: int) -> set[str]:
    """A share of the training groups, per label, held back to pick the head and fit its temperature."""
    by_label: dict[str, list[str]] = {}
    for r in records:
        groups = by_label.setdefault(r["label"], [])
        if r["group"] not in groups:
            groups.append(r["group"])
    chosen: set[str] = set()
    for label, groups in sorted(by_label.items()):
        random.Random(f"{seed}:cal:{label}").shuffle(groups)
        chosen.update(groups[: max(1, round(len(groups) * CAL_SHARE))])
    return chosen


class Head(nn.Module):
    def __init__(self, dim: int, hidden: int, classes: int) -> None:
        super().__init__()
        if hidden:
            self.net = nn.Sequential(nn.Dropout(0.1), nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(0.2), nn.Linear(hidden, classes))
        else:
            self.net = nn.Sequential(nn.Linear(dim, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(weight [in, out], bias) per Linear, the layout `head_to_onnx` wants."""
        return [
            (m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
            for m in self.net
            if isinstance(m, nn.Linear)
        ]


def fit_head(cand: Candidate, x: np.ndarray, y: np.ndarray, seed: int) -> Head:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = Head(x.shape[1], cand.hidden, len(LABELS))
    counts = np.bincount(y, minlength=len(LABELS))
    # Balanced class weights: macro accuracy is the target, so no class may be sacrificed.
    weights = torch.tensor(len(y) / (len(LABELS) * np.maximum(counts, 1)), dtype=torch.float32)
    loss_fn = nn.CrossEntropyLoss(weight=weights, label_smoothing=0.05)
    opt = torch.optim.AdamW(model.parameters(), lr=cand.lr, weight_decay=cand.weight_decay)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    batch = 128
    for _ in tqdm(range(cand.epochs), desc=f"fit {cand.name}", unit="epoch", leave=False):
        model.train()
        order = torch.randperm(len(xt), generator=gen)
        for start in range(0, len(xt), batch):
            idx = order[start : start + batch]
            xb = xt[idx]
            # Jitter on the unit sphere: a paraphrase moves the embedding a little; the head should not care.
            xb = nn.functional.normalize(xb + 0.02 * torch.randn(xb.shape, generator=gen), dim=1)
            opt.zero_grad()
            loss_fn(model(xb), yt[idx]).backward()
            opt.step()
    model.eval()
    return model


def logits_of(model: Head, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """Temperature scaling (Guo et al. 2017): one scalar minimising calibration-set NLL."""
    lt, yt = torch.from_numpy(logits.astype(np.float32)), torch.from_numpy(y)
    log_t = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=200)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(lt / log_t.exp(), yt)
        loss.backward()
        return loss

    opt.step(closure)
    return float(log_t.exp().item())


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="Train the prompt classifier and export it to ONNX.")
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--data", type=Path, default=DATA_PATH)
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    args = ap.parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    t0 = time.perf_counter()

    records = [r for r in load_records(args.data) if r["split"] == "train"]  # held-out never loaded
    cal = calibration_groups(records, args.seed)
    texts = [r["text"] for r in records]
    y = np.array([LABELS.index(r["label"]) for r in records], dtype=np.int64)
    is_cal = np.array([r["group"] in cal for r in records])
    print(f"train split: {len(records)} prompts in {len({r['group'] for r in records})} groups "
          f"-> fit {int((~is_cal).sum())}, calibration {int(is_cal.sum())} ({len(cal)} groups)")

    print(f"embedding with {EMBEDDING_MODEL} ...")
    x = embed(load_encoder(), texts, progress=True)
    x_fit, y_fit, x_cal, y_cal = x[~is_cal], y[~is_cal], x[is_cal], y[is_cal]
    # The heads are tiny: one thread is an order of magnitude faster than two fighting over a busy CPU.
    torch.set_num_threads(1)

    results = []
    for cand in tqdm(CANDIDATES, desc="candidates", unit="head"):
        model = fit_head(cand, x_fit, y_fit, args.seed)
        m = metrics.confusion(y_cal, logits_of(model, x_cal).argmax(axis=1), len(LABELS))
        results.append((metrics.macro_f1(m), cand, model))
        tqdm.write(f"  {cand.name:<8} calibration macro-F1 {metrics.macro_f1(m):.3f}  accuracy {metrics.accuracy(m):.3f}")
    _, best, model = max(results, key=lambda r: r[0])

    cal_logits = logits_of(model, x_cal)
    temperature = fit_temperature(cal_logits, y_cal)
    ece_before = metrics.ece(softmax(cal_logits), y_cal)
    probs_cal = softmax(cal_logits / temperature)
    ece_after = metrics.ece(probs_cal, y_cal)
    m_cal = metrics.confusion(y_cal, probs_cal.argmax(axis=1), len(LABELS))

    doc = f"Switchyard prompt classifier: {best.name} head over {EMBEDDING_MODEL} embeddings, seed {args.seed}"
    onnx_model = head_to_onnx(model.layers(), temperature, LABELS, doc=doc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(onnx_model, str(args.out))
    meta = {
        "labels": list(LABELS),
        "dim": DIM,
        "embedding_model": EMBEDDING_MODEL,
        "embedding": "mean pooling, L2-normalised",
        "head": best.name,
        "temperature": temperature,
        "seed": args.seed,
        "data_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
        "fit_prompts": int(len(y_fit)),
        "calibration_prompts": int(len(y_cal)),
        "calibration": {
            "accuracy": metrics.accuracy(m_cal),
            "macro_f1": metrics.macro_f1(m_cal),
            "ece_before": ece_before,
            "ece_after": ece_after,
        },
        "candidates": {c.name: round(f1, 4) for f1, c, _ in results},
    }
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    # The exported graph must give the probabilities we just measured.
    onnx_probs = PromptClassifier(args.out).probabilities(x_cal)
    drift = float(np.abs(onnx_probs - probs_cal).max())
    if drift > 1e-4:
        raise SystemExit(f"ONNX export differs from the torch head by {drift:.2e}")

    print(f"\nchosen head: {best.name}   temperature {temperature:.3f}   "
          f"ECE {ece_before:.3f} -> {ece_after:.3f} (calibration split)")
    print(metrics.format_report(m_cal, LABELS))
    print(metrics.format_confusion(m_cal, LABELS))
    print(f"\nwrote {args.out} ({args.out.stat().st_size / 1024:.1f} KiB) and {args.out.with_suffix('.json').name}; "
          f"onnx vs torch max |Δp| {drift:.1e}; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
