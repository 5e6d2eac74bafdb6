"""Train the learned near-miss verifier (cache/verifier_model.py) on the TRAIN split and the training
probes; cuts from DEV and out of fold.

    python -m cache.train_verifier [--seed 0] [--out cache/model/verifier.json.gz]

1. Groups. `cache/data/train/` (hand-written groups, one file per topic) and the probes in
   `evalset.TRAINING_PROBES` (one file each: questions written by hands that read no code, in the style of
   real traffic), less every group that asks a dev or held-out question again (a question or paraphrase
   within cosine 0.8 of one of theirs). Dev and `evalset.HELD_OUT` (held-out, probes X, Y, Z, AA) are never
   trained on.
2. Pairs. Within a group the question and its paraphrases are interchangeable (positives, both orders);
   a near-miss against any of them, and two near-misses of one group, are negatives. Pairs a hard rule
   vetoes (numbers, negation, poles, question type, intent, form, direction, language) never reach the model and are
   left out; everything else is kept, whether the rules pass it or refuse it for unmatched words.
3. Model. Principal axes for the unmatched-word vectors are fitted on the training pairs, then a
   histogram gradient-boosted tree ensemble (scikit-learn) on all features; the trees are exported as
   flat arrays to gzipped JSON and checked to reproduce scikit-learn's probabilities.
4. Cuts, chosen on unseen questions. The lookup of bench/cache_quality.py (every group's question
   stored, the 4 nearest entries at cosine >= the shipped threshold checked in order; plain, and
   rotated: a paraphrase stored instead) is simulated on dev, with the final model, and out of fold on
   the training groups: the files (train topics and probes) are split into 4 folds and a model fitted on
   three scores the lookups among the fourth's groups (the train split's together, each probe on its
   own, the adversarial probes A-C not at all). A grid of (veto_cut, accept_cut) is scored; the chosen
   pair has the most utility — the mean over the six protocols (dev, train and probes out of fold;
   plain and rotated) of hit rate minus --wrong-hit-cost (10) × false-hit rate: a wrong hit is a wrong
   answer, a missed hit one upstream call — among those with false hits <= --max-fp (plain) and
   <= --max-fp-rotated (rotated) on dev and on the probes out of fold (the train split is harder than
   traffic by design: its near-misses are not held to the budget). Utilities within one dev
   near-miss's weight of the best are a tie, broken towards more hits.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cache import guard  # noqa: E402
from cache import verifier_model as vm  # noqa: E402
from cache.evalset import (ADVERSARIAL, HELD_OUT, TRAINING_PROBES, Group, load_file, load_groups,  # noqa: E402
                           repeated_questions, split_paths, texts_of)
from cache.service import CANDIDATES  # noqa: E402

VETO_CUTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
ACCEPT_CUTS = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.01)


def build_pairs(groups: list[Group]) -> list[tuple[str, str, int, int]]:
    """(query, cached, label, group index) for every pair within a group that reaches the model."""
    pairs: dict[tuple[str, str], tuple[int, int]] = {}
    for gi, g in enumerate(groups):
        same = [g.query, *g.paraphrases]
        near = [t for _, t in g.near_misses]
        for x in same:
            for y in same:
                if x != y:
                    pairs.setdefault((x, y), (1, gi))
            for n in near:
                pairs.setdefault((n, x), (0, gi))
                pairs.setdefault((x, n), (0, gi))
        for n in near:
            for m in near:
                if n != m:
                    pairs.setdefault((n, m), (0, gi))
    return [(q, c, label, gi) for (q, c), (label, gi) in tqdm(pairs.items(), desc="rules", unit="pair", mininterval=5)
            if q != c and not guard.verify_rules(q, c).hard_veto]


def raw_features(pairs, words: vm.WordVectors, progress: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(named features, raw word vectors) per pair; the unmatched terms are found once per pair."""
    base, raw = [], []
    for q, c, *_ in tqdm(pairs, desc="features", unit="pair", mininterval=5, disable=not progress):
        miss = vm.unmatched(q, c)
        base.append(vm.base_features(q, c, words, miss))
        raw.append(vm.word_features(q, c, words, miss))
    return np.array(base), np.array(raw)


def fit(base: np.ndarray, raw: np.ndarray, y: np.ndarray, seed: int, iterations: int):
    """(sklearn model, projections) fitted on these rows."""
    from sklearn.decomposition import PCA
    from sklearn.ensemble import HistGradientBoostingClassifier

    def axes(rows: np.ndarray, k: int) -> dict:
        pca = PCA(k, random_state=seed).fit(rows)
        return {"mean": pca.mean_.tolist(), "components": pca.components_.tolist()}

    projections = {"words": axes(np.concatenate([raw[:, :384], raw[:, 384:768]]), vm.WORD_AXES),
                   "swaps": axes(np.concatenate([raw[:, 768:1152], raw[:, 1152:]]), vm.SWAP_AXES)}
    x = vm.assemble(base, raw, projections["words"], projections["swaps"])
    model = HistGradientBoostingClassifier(max_iter=iterations, learning_rate=0.1, max_leaf_nodes=31,
                                           early_stopping=False, random_state=seed).fit(x, y)
    return model, projections


def export(model, projections: dict, veto_cut: float, accept_cut: float, meta: dict) -> dict:
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        trees.append({"feature": nodes["feature_idx"].astype(int).tolist(),
                      "threshold": nodes["num_threshold"].astype(float).tolist(),
                      "left": nodes["left"].astype(int).tolist(), "right": nodes["right"].astype(int).tolist(),
                      "leaf": nodes["is_leaf"].astype(bool).tolist(), "value": nodes["value"].astype(float).tolist()})
    return {"kind": "histogram gradient-boosted trees (log-odds)", "features": vm.FEATURES,
            "baseline": float(np.ravel(model._baseline_prediction)[0]),
            "projections": projections, "veto_cut": veto_cut, "accept_cut": accept_cut, "trees": trees, "meta": meta}


def write(spec: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(spec, separators=(",", ":"), sort_keys=True).encode("utf-8")
    path.write_bytes(gzip.compress(text, mtime=0))  # mtime 0: the same model gives the same bytes


def lookups(groups: list[Group], vectors: dict[str, np.ndarray], threshold: float, rotated: bool):
    """The bench's protocol: per asked text, its candidates in order as (group, text, veto, rules ok)."""
    stored = [g.paraphrases[0] if rotated else g.query for g in groups]
    matrix = np.array([vectors[t] for t in stored])
    out = []
    for gi, g in enumerate(groups):
        askers = [(True, t) for t in [g.query, *g.paraphrases] if t != stored[gi]]
        askers += [(False, t) for _, t in g.near_misses]
        for para, text in askers:
            sims = matrix @ vectors[text]
            cands = []
            for j in np.argsort(-sims)[:CANDIDATES]:
                if sims[j] < threshold:
                    break
                if text == stored[j]:  # the exact layer answers it
                    cands.append((int(j), stored[j], False, True, True))
                    continue
                verdict = guard.verify_rules(text, stored[j])
                cands.append((int(j), stored[j], verdict.hard_veto, verdict.ok, False))
            out.append((gi, para, text, cands))
    return out


def score_lookups(looks, predict) -> dict[tuple[str, str], float]:
    need = sorted({(text, cached) for _, _, text, cands in looks for _, cached, veto, _, same in cands
                   if not veto and not same})
    return dict(zip(need, predict(need))) if need else {}


def simulate(looks, probs: dict, veto_cut: float | None, accept_cut: float | None) -> np.ndarray:
    """Counts [paraphrases served their own entry, paraphrases, near-misses served, near-misses] of the
    bench protocol; cuts None = the rules alone."""
    right = para = near = near_hits = 0
    for gi, is_para, text, cands in looks:
        served, exact = None, False
        for j, cached, veto, ok, same in cands:
            if same:
                served, exact = j, True
                break
            if veto:
                continue
            if veto_cut is None:
                accept = ok
            else:
                p = probs[(text, cached)]
                accept = p >= veto_cut if ok else p >= accept_cut
            if accept:
                served = j
                break
        if is_para:
            para += 1
            right += served == gi
        else:
            near += 1
            # a near-miss written exactly as another group's question is answered right by its exact hit
            near_hits += served is not None and not exact
    return np.array([right, para, near_hits, near])


def rates(runs, veto_cut: float | None, accept_cut: float | None) -> tuple[float, float]:
    """(paraphrase hit rate, false-hit rate) pooled over several (looks, probs) runs."""
    right, para, near_hits, near = sum(simulate(looks, probs, veto_cut, accept_cut) for looks, probs in runs)
    return right / para, near_hits / near


def predictor(model, projections, words: vm.WordVectors):
    def predict(pairs: list[tuple[str, str]]) -> list[float]:
        base, raw = raw_features(pairs, words, progress=False)
        return model.predict_proba(vm.assemble(base, raw, projections["words"], projections["swaps"]))[:, 1].tolist()
    return predict


def out_of_fold(groups: list[Group], file_of: list[int], source_of: list[str], pairs, base, raw, y, vectors,
                threshold: float, seed: int, iterations: int, words) -> dict[tuple[str, bool], list]:
    """The bench protocol on the training groups' own questions, scored out of fold: the files are split
    into 4 folds; a model fitted on three scores the lookups among the fourth's groups — the train
    split's groups of a fold together, each probe on its own as the bench does. The adversarial probes,
    written against the guard's code, are trained on but not scored."""
    if len(set(file_of)) < 4:  # a small run (tests): folds by group instead of by file
        file_of = list(range(len(groups)))
    fold_of_pair = np.array([file_of[gi] % 4 for *_, gi in pairs])
    runs: dict[tuple[str, bool], list] = {(source, rotated): [] for source in ("train", "probes")
                                          for rotated in (False, True)}
    for k in tqdm(range(4), desc="out-of-fold (files)", unit="fold"):
        train = np.nonzero(fold_of_pair != k)[0]
        model, projections = fit(base[train], raw[train], y[train], seed, iterations)
        predict = predictor(model, projections, words)
        held = [gi for gi in range(len(groups)) if file_of[gi] % 4 == k]
        indexes = [[gi for gi in held if source_of[gi] == "train"]]
        indexes += [[gi for gi in held if file_of[gi] == fi] for fi in sorted({file_of[gi] for gi in held
                                                                               if source_of[gi] == "probes"})]
        for members in indexes:
            if not members:
                continue
            source = source_of[members[0]]
            for rotated in (False, True):
                looks = lookups([groups[gi] for gi in members], vectors, threshold, rotated)
                runs[source, rotated].append((looks, score_lookups(looks, predict)))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(vm.MODEL_PATH))
    parser.add_argument("--max-fp", type=float, default=0.005, help="false-hit budget on dev and the probes (plain)")
    parser.add_argument("--max-fp-rotated", type=float, default=0.01, help="false-hit budget (rotated)")
    parser.add_argument("--threshold-cos", type=float, default=None, help="cosine threshold (default: shipped)")
    parser.add_argument("--iterations", type=int, default=500, help="boosting iterations (trees)")
    parser.add_argument("--wrong-hit-cost", type=float, default=10.0,
                        help="how many missed hits one wrong hit is worth when the cuts are chosen")
    parser.add_argument("--max-overlap", type=float, default=0.8)
    parser.add_argument("--limit-groups", type=int, default=None, help="use the first N training groups (tests)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.time()
    from cache.encoder import Encoder
    from policies.schema import CachePolicy

    threshold = args.threshold_cos if args.threshold_cos is not None else CachePolicy().threshold
    groups, file_of, source_of = [], [], []
    sources = [(path, "train", "train") for path in split_paths("train")]  # (file, split, source)
    sources += [(path, split, "adversarial" if split in ADVERSARIAL else "probes")
                for split in TRAINING_PROBES for path in split_paths(split)]
    for fi, (path, split, source) in enumerate(sources):
        for g in load_file(path, split):
            groups.append(g)
            file_of.append(fi)
            source_of.append(source)
    limit = args.limit_groups
    groups, file_of, source_of = groups[:limit], file_of[:limit], source_of[:limit]
    dev = load_groups("dev")
    unseen = ["dev", *HELD_OUT]
    evaluation = [*dev, *(g for split in HELD_OUT for g in load_groups(split))]  # only for the overlap filter
    encoder = Encoder.load()
    texts = texts_of([*groups, *evaluation])
    vectors = dict(zip(texts, encoder.embed_many(texts)))
    repeated = set(repeated_questions(groups, evaluation, vectors, args.max_overlap))
    kept = [gi for gi in range(len(groups)) if gi not in repeated]
    groups, file_of, source_of = ([groups[gi] for gi in kept], [file_of[gi] for gi in kept],
                                  [source_of[gi] for gi in kept])
    pairs = build_pairs(groups)
    words = vm.WordVectors.shared()
    base, raw = raw_features(pairs, words)
    y = np.array([label for _, _, label, _ in pairs])
    print(f"training groups {len(groups)} (train split {source_of.count('train')}, probes {source_of.count('probes')}, "
          f"adversarial probes {source_of.count('adversarial')}; "
          f"{len(repeated)} left out: they repeat a question of {', '.join(unseen)}); "
          f"model pairs {len(pairs)} (positives {int(y.sum())}, negatives {int((1 - y).sum())}, "
          f"rules pass {base[:, vm.BASE_FEATURES.index('rules_ok')].mean():.1%})")
    model, projections = fit(base, raw, y, args.seed, args.iterations)

    predict = predictor(model, projections, words)
    looks = {r: lookups(dev, vectors, threshold, r) for r in (False, True)}
    runs = {("dev", r): [(looks[r], score_lookups(looks[r], predict))] for r in (False, True)}
    oof = out_of_fold(groups, file_of, source_of, pairs, base, raw, y, vectors, threshold, args.seed,
                      args.iterations, words)
    runs |= {key: value for key, value in oof.items() if value}  # a tiny run may hold no probe
    budgeted = [key for key in runs if key[0] != "train"]
    rules = {key: rates(value, None, None) for key, value in runs.items()}
    names = [name for name in ("dev", "train", "probes") if (name, False) in runs]
    print(f"\nbench lookup simulated at cosine threshold {threshold}: dev (unseen in training), the train split "
          f"and the training probes out of fold (4 folds by file); per protocol paraphrase hit / false hit, "
          f"plain and rotated")
    print(f"{'veto':>5} | {'accept':>6} | "
          + " || ".join(f"{name + ' para':>11} | {'false':>5} | {'rotated':>7} | {'false':>5}" for name in names)
          + f" | {'utility':>7}")
    print("-" * (26 + 44 * len(names)))

    def line(label: str, r: dict) -> str:
        return f"{label} | " + " || ".join(f"{r[name, False][0]:>11.1%} | {r[name, False][1]:>5.1%} | "
                                          f"{r[name, True][0]:>7.1%} | {r[name, True][1]:>5.1%}" for name in names)

    rules_utility = float(np.mean([hit - args.wrong_hit_cost * false for hit, false in rules.values()]))
    print(line(f"{'rules only':>14}", rules) + f" | {rules_utility:>7.3f}")
    candidates = []
    for veto in VETO_CUTS:
        for accept in ACCEPT_CUTS:
            if accept < veto:
                continue
            r = {key: rates(value, veto, accept) for key, value in runs.items()}
            within = all(r[key][1] <= (args.max_fp_rotated if key[1] else args.max_fp) + 1e-9 for key in budgeted)
            # a wrong hit costs a wrong answer, a missed one an upstream call: weigh them, and let the
            # protocols (dev, train and probes out of fold; plain and rotated) count alike
            utility = float(np.mean([hit - args.wrong_hit_cost * false for hit, false in r.values()]))
            print(line(f"{veto:>5.2f} | {accept:>6.2f}", r) + f" | {utility:>7.3f}" + ("" if within else "   over budget"))
            if within:
                candidates.append((veto, accept, utility, r))
    if not candidates:
        raise SystemExit("no cuts meet the false-hit budget")
    # Utilities closer than one dev near-miss served (its weight in the mean) are a tie the data cannot
    # break: the cut moved between 0.6 and 0.7 from one retrain to the next on such margins. Among tied
    # cuts, serve the most paraphrases.
    resolution = args.wrong_hit_cost / (len(runs) * sum(len(g.near_misses) for g in dev))
    best = max(utility for _, _, utility, _ in candidates)
    tied = [c for c in candidates if c[2] >= best - resolution]
    veto, accept, _, r = max(tied, key=lambda c: (np.mean([hit for hit, _ in c[3].values()]), c[2]))
    print(f"chosen veto p < {veto}, accept p >= {accept}:")
    print(line(f"{veto:>5.2f} | {accept:>6.2f}", r))
    print(f"(within the budget on dev and the probes — false hits <= {args.max_fp:.1%}, rotated <= "
          f"{args.max_fp_rotated:.1%} — the most utility, the mean over the {len(runs)} of hit rate - "
          f"{args.wrong_hit_cost:g} x false-hit rate; cuts within "
          f"{resolution:.4f} of the best, one dev near-miss served, count as tied and the one serving most wins: "
          f"{len(tied)} tied)")

    spec = json.loads(json.dumps(export(model, projections, veto, accept, {
        "seed": args.seed, "iterations": args.iterations, "threshold_cos": threshold, "train_groups": len(groups),
        "pairs": len(pairs), "trained_on": ["cache/data/train/", *TRAINING_PROBES],
        "cuts_chosen_on": "cache/data/groups_dev.txt and out of fold"})))
    shipped = vm.VerifierModel(spec)
    sample = vm.assemble(base, raw, projections["words"], projections["swaps"])[:: max(1, len(pairs) // 500)]
    gap = max(abs(shipped.probability(row) - p) for row, p in zip(sample, model.predict_proba(sample)[:, 1]))
    if gap > 1e-6:
        raise SystemExit(f"exported trees disagree with scikit-learn (max |dp| {gap:.2e})")
    write(spec, Path(args.out))
    print(f"exported trees reproduce scikit-learn (max |dp| {gap:.1e}); wrote {args.out} "
          f"({Path(args.out).stat().st_size / 2**20:.1f} MiB) in {time.time() - started:.0f} s")

if __name__ == "__main__":
    main()
