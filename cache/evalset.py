"""Loader for the hand-written groups in `cache/data/` (format in cache/data/README.md): the `dev` and
`heldout` evaluation splits, the probes (`probe_a` … `probe_z`, `probe_aa`: adversarial ones, and ones written by
hands that read no code), the context pairs, and the `train` split (every file in `cache/data/train/`)
that the learned verifier is fitted on, with the probes in `TRAINING_PROBES`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).parent / "data"
SPLITS = {"dev": DATA_DIR / "groups_dev.txt", "heldout": DATA_DIR / "groups_heldout.txt",
          "probe_a": DATA_DIR / "groups_probe_a.txt", "probe_b": DATA_DIR / "groups_probe_b.txt",
          "probe_c": DATA_DIR / "groups_probe_c.txt", "probe_d": DATA_DIR / "groups_probe_d.txt",
          "probe_e": DATA_DIR / "groups_probe_e.txt",
          "probe_f": DATA_DIR / "groups_probe_f.txt",
          "probe_g": DATA_DIR / "groups_probe_g.txt",
          "probe_h": DATA_DIR / "groups_probe_h.txt",
          "probe_i": DATA_DIR / "groups_probe_i.txt",
          "probe_j": DATA_DIR / "groups_probe_j.txt",
          "probe_k": DATA_DIR / "groups_probe_k.txt",
          "probe_l": DATA_DIR / "groups_probe_l.txt",
          "probe_m": DATA_DIR / "groups_probe_m.txt",
          "probe_n": DATA_DIR / "groups_probe_n.txt",
          "probe_o": DATA_DIR / "groups_probe_o.txt",
          "probe_p": DATA_DIR / "groups_probe_p.txt",
          "probe_q": DATA_DIR / "groups_probe_q.txt",
          "probe_r": DATA_DIR / "groups_probe_r.txt",
          "probe_s": DATA_DIR / "groups_probe_s.txt",
          "probe_t": DATA_DIR / "groups_probe_t.txt",
          "probe_u": DATA_DIR / "groups_probe_u.txt",
          "probe_v": DATA_DIR / "groups_probe_v.txt",
          "probe_w": DATA_DIR / "groups_probe_w.txt",
          "probe_x": DATA_DIR / "groups_probe_x.txt",
          "probe_y": DATA_DIR / "groups_probe_y.txt",
          "probe_z": DATA_DIR / "groups_probe_z.txt",
          "probe_aa": DATA_DIR / "groups_probe_aa.txt"}
TRAIN_DIR = DATA_DIR / "train"
# Splits no trainer ever sees: the held-out split and the four newest probes, so the learned verifier's
# numbers on them are out of sample. Dev chooses the verifier's cuts; every other probe is training data
# for it (cache/train_verifier.py), besides the train split.
HELD_OUT = ("heldout", "probe_x", "probe_y", "probe_z", "probe_aa")
# written against the guard's code, not as traffic: trained on, not scored out of fold
ADVERSARIAL = ("probe_a", "probe_b", "probe_c")
TRAINING_PROBES = tuple(s for s in SPLITS if s.startswith("probe_") and s not in HELD_OUT)
# a question that opens with context about the asker, against a cached one without (label, query, cached)
CONTEXT_PAIRS = DATA_DIR / "pairs_context.txt"


@dataclass
class Group:
    split: str
    query: str
    paraphrases: list[str] = field(default_factory=list)
    near_misses: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)


def split_paths(split: str) -> list[Path]:
    if split == "train":
        return sorted(TRAIN_DIR.glob("*.txt"))
    return [SPLITS[split]]


def load_groups(split: str) -> list[Group]:
    return [g for path in split_paths(split) for g in load_file(path, split)]


def load_file(path: Path, split: str) -> list[Group]:
    groups: list[Group] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("Q:"):
            groups.append(Group(split, line[2:].strip()))
        elif not groups:
            raise ValueError(f"{path}:{number}: entry before the first 'Q:' line")
        elif line.startswith("="):
            groups[-1].paraphrases.append(line[1:].strip())
        elif line.startswith("!"):
            kind, _, text = line[1:].partition(":")
            groups[-1].near_misses.append((kind.strip(), text.strip()))
        else:
            raise ValueError(f"{path}:{number}: expected 'Q:', '=' or '!': {raw!r}")
    return groups


def load_pairs(path: Path = CONTEXT_PAIRS) -> list[tuple[str, str, str]]:
    """(label, query, cached) per line: SAME when the cached answer is right for the query, DIFF when not."""
    pairs = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        label, query, cached = raw.split("\t")
        if label not in ("SAME", "DIFF"):
            raise ValueError(f"{path}:{number}: label must be SAME or DIFF: {label!r}")
        pairs.append((label, query, cached))
    return pairs


def texts_of(groups: list[Group]) -> list[str]:
    return sorted({t for g in groups for t in [g.query, *g.paraphrases, *(x for _, x in g.near_misses)]})


def repeated_questions(train: list[Group], evaluation: list[Group], vectors: dict[str, np.ndarray],
                       max_cosine: float = 0.8) -> list[int]:
    """Indices of training groups that ask an evaluation question again: any of the group's question or
    paraphrases within `max_cosine` of any evaluation question or paraphrase. Trainers leave them out so
    that dev calibration and held-out numbers measure unseen questions."""
    evals = np.array([vectors[t] for g in evaluation for t in [g.query, *g.paraphrases]])
    out = []
    for gi, g in enumerate(train):
        own = np.array([vectors[t] for t in [g.query, *g.paraphrases]])
        if float((own @ evals.T).max()) >= max_cosine:
            out.append(gi)
    return out
