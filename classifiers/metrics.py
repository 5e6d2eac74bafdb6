"""Classification metrics shared by training, the benchmark and the tests (numpy only)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def confusion(y_true: np.ndarray, y_pred: np.ndarray, n: int) -> np.ndarray:
    """rows: true class, columns: predicted class."""
    m = np.zeros((n, n), dtype=np.int64)
    np.add.at(m, (y_true, y_pred), 1)
    return m


def per_class(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """precision, recall, F1 per class from a confusion matrix (0 where undefined)."""
    tp = np.diag(m).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.nan_to_num(tp / m.sum(axis=0))
        recall = np.nan_to_num(tp / m.sum(axis=1))
        f1 = np.nan_to_num(2 * precision * recall / (precision + recall))
    return precision, recall, f1


def macro_accuracy(m: np.ndarray) -> float:
    """Mean per-class recall (balanced accuracy): a class with fewer prompts counts as much."""
    return float(per_class(m)[1].mean())


def macro_f1(m: np.ndarray) -> float:
    return float(per_class(m)[2].mean())


def accuracy(m: np.ndarray) -> float:
    return float(np.trace(m) / m.sum())


def ece(probs: np.ndarray, y_true: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of the top-class confidence."""
    conf = probs.max(axis=1)
    correct = probs.argmax(axis=1) == y_true
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            total += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    return float(total)


def format_confusion(m: np.ndarray, labels: Sequence[str]) -> str:
    width = max(8, *(len(x) + 1 for x in labels))
    head = "true \\ pred".ljust(width + 4) + "".join(x.rjust(width) for x in labels)
    rows = [head] + [labels[i].ljust(width + 4) + "".join(str(v).rjust(width) for v in m[i]) for i in range(len(labels))]
    return "\n".join(rows)


def format_report(m: np.ndarray, labels: Sequence[str]) -> str:
    p, r, f = per_class(m)
    lines = [f"{'class':<10}{'precision':>10}{'recall':>10}{'f1':>10}{'n':>6}"]
    for i, name in enumerate(labels):
        lines.append(f"{name:<10}{p[i]:>10.3f}{r[i]:>10.3f}{f[i]:>10.3f}{int(m[i].sum()):>6}")
    lines.append(
        f"accuracy {accuracy(m):.3f}   macro accuracy {macro_accuracy(m):.3f}   macro-F1 {macro_f1(m):.3f}"
    )
    return "\n".join(lines)
