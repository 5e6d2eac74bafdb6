"""Fit and check `policies.tokens.EstimateCounter` against a real tokenizer.

    python bench/token_estimate.py --tekken PATH/tekken_240911.json   # Mistral's byte-level BPE (needs tiktoken)
    python bench/token_estimate.py --hf DIR                            # any HF tokenizer directory

The Tekken file ships inside the `mistral-common` wheel (`pip download --no-deps mistral-common`, then
unzip `mistral_common/data/tekken_240911.json`). The corpus is text every machine with Python has: the
standard library's docstrings (English prose), its source (code), JSON, and the translated messages in
/usr/share/locale (non-English text). Prints the fitted weights to paste into policies/tokens.py and the
error of the current estimate and of plain bytes/4, side by side.
"""

from __future__ import annotations

import argparse
import base64
import gettext
import importlib
import inspect
import json
import pkgutil
import random
import string
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from policies.tokens import ESTIMATE  # noqa: E402

_PUNCT = {ord(c): None for c in string.punctuation}


def corpus(seed: int = 0, per_kind: int = 500) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    prose, code = [], []
    for mod in sorted(m.name for m in pkgutil.iter_modules() if m.module_finder.path.endswith("lib/python3.11")):
        if mod.startswith(("_", "test", "idlelib", "tkinter", "turtle", "antigravity", "this")):
            continue
        try:
            module = importlib.import_module(mod)
        except Exception:  # noqa: BLE001 - some stdlib modules need missing C libraries
            continue
        for _, obj in inspect.getmembers(module):
            doc = inspect.getdoc(obj) if callable(obj) else None
            if doc and len(doc) > 200:
                prose.append(doc)
        try:
            code.append(inspect.getsource(module))
        except (OSError, TypeError):
            pass
    chunks: dict[str, list[str]] = {"prose": [], "code": [], "json": [], "i18n": []}
    for doc in prose:
        chunks["prose"].append(doc[:2000])
    for src in code:
        for i in range(0, min(len(src), 20000), 1500):
            chunks["code"].append(src[i:i + 1500])
    for _ in range(per_kind):
        obj = {rng.choice(prose)[:12].strip(): [rng.randint(0, 10**rng.randint(1, 9)) for _ in range(rng.randint(1, 8))],
               "name": rng.choice(prose)[:40], "ok": rng.random() < 0.5, "score": round(rng.random() * 100, 3)}
        chunks["json"].append(json.dumps(obj, indent=rng.choice([None, 2])))
    for mo in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES/*.mo")):
        try:
            catalog = gettext.GNUTranslations(mo.open("rb"))._catalog  # noqa: SLF001 - the only reader there is
        except Exception:  # noqa: BLE001
            continue
        texts = [v for v in catalog.values() if isinstance(v, str) and len(v) > 20 and not v.isascii()]
        if len(texts) > 10:
            rng.shuffle(texts)
            chunks["i18n"].append(" ".join(texts[:30])[:1500])
    out = []
    for kind, items in chunks.items():
        rng.shuffle(items)
        out.extend((kind, t) for t in items[:per_kind])
    return out


def features(text: str) -> list[float]:
    n = len(text)
    return [n, text.count(" "), text.count("\n"), sum(text.count(d) for d in "0123456789"),
            n - len(text.translate(_PUNCT)), len(text.encode()) - n]


def tekken_counter(path: str):
    import tiktoken

    data = json.loads(Path(path).read_text())
    cfg = data["config"]
    n_inner = cfg["default_vocab_size"] - cfg["default_num_special_tokens"]
    ranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in data["vocab"][:n_inner]}
    enc = tiktoken.Encoding("tekken", pat_str=cfg["pattern"], mergeable_ranks=ranks, special_tokens={})
    return lambda text: len(enc.encode(text, disallowed_special=()))


def hf_counter(path: str):
    from policies.tokens import HFTokenCounter

    return HFTokenCounter(path).count_text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tekken")
    ap.add_argument("--hf")
    args = ap.parse_args()
    if not (args.tekken or args.hf):
        ap.error("give --tekken or --hf")
    count = tekken_counter(args.tekken) if args.tekken else hf_counter(args.hf)
    data = corpus()
    y = np.array([count(t) for _, t in data], dtype=float)
    X = np.array([features(t) for _, t in data], dtype=float)
    w, *_ = np.linalg.lstsq(X / y[:, None], np.ones(len(y)), rcond=None)  # minimise relative error
    names = ["CHAR", "SPACE", "NEWLINE", "DIGIT", "PUNCT", "WIDE"]
    print("fitted weights:")
    for n, v in zip(names, w, strict=True):
        print(f"  _W_{n} = {v:.4f}")
    kinds = sorted({k for k, _ in data})
    print(f"\n{'text':<8}{'chunks':>8}{'bytes/4 err':>14}{'fitted err':>12}{'current err':>13}  (median |relative error|)")
    for kind in kinds + ["all"]:
        idx = [i for i, (k, _) in enumerate(data) if kind in (k, "all")]
        truth = y[idx]
        b4 = np.array([len(data[i][1].encode()) / 4 for i in idx])
        fit = X[idx] @ w
        cur = np.array([ESTIMATE.count_text(data[i][1]) for i in idx])
        med = lambda est: float(np.median(np.abs(est - truth) / truth)) * 100  # noqa: E731
        print(f"{kind:<8}{len(idx):>8}{med(b4):>13.1f}%{med(fit):>11.1f}%{med(cur):>12.1f}%")


if __name__ == "__main__":
    main()
