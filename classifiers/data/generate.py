"""Write `classifiers/data/prompts.jsonl`, the prompt classifier's labelled data.

    python -m classifiers.data.generate

Every prompt comes from `templates.py` (our own sentences): slot templates filled from `vocab.py` and
`passages.py`, literal prompts, non-English prompts and multi-turn conversations, with surface noise
(typos, lower case, dropped punctuation, filler openers) so the classifier sees how people really type.

Each record: {"text", "label", "group", "split", "kind"} plus "messages" for conversations.
The held-out split is by group (one template, one literal, one conversation), and slot lists are split
too: a held-out prompt shares neither its template nor its fillers with any training prompt, so its
score measures generalisation, not recall of near-duplicates. Output is deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from pathlib import Path

from classifiers.data.passages import P
from classifiers.data.templates import CONVERSATIONS, FOREIGN, LITERALS, TEMPLATES
from classifiers.data.vocab import V

OUT = Path(__file__).with_name("prompts.jsonl")
LABELS = ("simple", "complex", "code", "math")
HELDOUT_SHARE = 0.2
FILLER_HELDOUT_SHARE = 0.25
MIN_SPLIT_LIST = 8  # shorter slot lists are generic (days, genres) and are shared by both splits
VARIANTS_PER_TEMPLATE = 8

_SLOT = re.compile(r"\{([a-z_]+?)(2)?(?::(-?\d+):(-?\d+))?\}")
_OPENERS = ["hey ", "hi, ", "quick question: ", "ok so ", "Hello. ", "pls ", "hey there - ", "urgent: ", "um, "]
_CLOSERS = [" thanks", " thx!", " :)", " asap", " please", "??", " ty", " cheers"]


def split_fillers(seed: int) -> dict[str, dict[str, list[str]]]:
    """For each slot list: which fillers the train templates and the held-out templates may use."""
    out: dict[str, dict[str, list[str]]] = {}
    for name, items in {**V, **P}.items():
        items = list(items)
        if len(items) < MIN_SPLIT_LIST:
            out[name] = {"train": items, "heldout": items}
            continue
        random.Random(f"{seed}:{name}").shuffle(items)
        k = math.ceil(len(items) * FILLER_HELDOUT_SHARE)
        out[name] = {"heldout": items[:k], "train": items[k:]}
    return out


def fill(template: str, fillers: dict[str, list[str]], rng: random.Random) -> str:
    chosen: dict[str, str] = {}

    def one(m: re.Match[str]) -> str:
        name, second, lo, hi = m.groups()
        if name == "int":
            return str(rng.randint(int(lo), int(hi)))
        if name == "dec":
            return f"{rng.uniform(int(lo), int(hi)):.2f}"
        pool = fillers[name]
        if second:  # `{x2}`: a different value from the same list as `{x}`
            pool = [v for v in pool if v != chosen.get(name)] or pool
            return rng.choice(pool)
        chosen[name] = rng.choice(pool)
        return chosen[name]

    return _SLOT.sub(one, template)


def typo(text: str, rng: random.Random) -> str:
    words = [(m.start(), m.end()) for m in re.finditer(r"[A-Za-z]{5,}", text)]
    if not words:
        return text
    s, e = rng.choice(words)
    w = list(text[s:e])
    i = rng.randrange(1, len(w) - 1)
    op = rng.random()
    if op < 0.5:
        w[i], w[i + 1] = w[i + 1], w[i]  # transposition
    elif op < 0.8:
        del w[i]  # dropped letter
    else:
        w.insert(i, w[i])  # doubled letter
    return text[:s] + "".join(w) + text[e:]


def noisy(text: str, rng: random.Random) -> str:
    """How people actually type: lower case, no final punctuation, typos, filler openers and closers."""
    one_line = "\n" not in text
    if one_line and rng.random() < 0.3:
        text = text.lower()
    if one_line and rng.random() < 0.3:
        text = text.rstrip(".?!")
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
        text = typo(text, rng)
    if rng.random() < 0.2:
        text = rng.choice(_OPENERS) + text[:1].lower() + text[1:]
    if one_line and rng.random() < 0.15:
        text = text + rng.choice(_CLOSERS)
    return text


def render(messages: list[dict[str, str]], how: str) -> str:
    """The text a conversation is classified by. The gateway's shared embedding may be built from the
    whole conversation or from the last user turn, so the data teaches both (and last-turn-first, which
    keeps the deciding turn inside MiniLM's 256-token window)."""
    last_user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    if how == "last":
        return last_user
    if how == "all":
        return "\n".join(m["content"] for m in messages)
    earlier = [m["content"] for m in messages[:-1]][::-1]
    return "\n".join([last_user, *earlier])


def assign_splits(groups: list[tuple[str, str, str]], seed: int) -> dict[str, str]:
    """Held-out share per (label, kind), so every class and every kind of prompt is tested."""
    split: dict[str, str] = {}
    by_stratum: dict[tuple[str, str], list[str]] = {}
    for gid, label, kind in groups:
        by_stratum.setdefault((label, kind), []).append(gid)
    for (label, kind), gids in sorted(by_stratum.items()):
        random.Random(f"{seed}:{label}:{kind}").shuffle(gids)
        k = round(len(gids) * HELDOUT_SHARE)
        for i, gid in enumerate(gids):
            split[gid] = "heldout" if i < k else "train"
    return split


def build(seed: int) -> list[dict]:
    groups: list[tuple[str, str, str]] = []
    for label in LABELS:
        groups += [(f"{label}/t{i}", label, "template") for i in range(len(TEMPLATES[label]))]
        groups += [(f"{label}/l{i}", label, "literal") for i in range(len(LITERALS[label]))]
        groups += [(f"{label}/f{i}", label, "foreign") for i in range(len(FOREIGN[label]))]
        groups += [(f"{label}/m{i}", label, "conversation") for i in range(len(CONVERSATIONS[label]))]
    split = assign_splits(groups, seed)
    fillers = split_fillers(seed)
    rng = random.Random(seed)
    records: list[dict] = []
    seen: set[str] = set()

    def add(text: str, label: str, gid: str, kind: str, messages: list[dict] | None = None) -> None:
        key = " ".join(text.lower().split())
        if key in seen:  # an exact duplicate must never sit in both splits
            return
        seen.add(key)
        rec = {"text": text, "label": label, "group": gid, "split": split[gid], "kind": kind}
        if messages is not None:
            rec["messages"] = messages
        records.append(rec)

    for label in LABELS:
        for i, tpl in enumerate(TEMPLATES[label]):
            gid = f"{label}/t{i}"
            pool = {name: lists[split[gid]] for name, lists in fillers.items()}
            for v in range(VARIANTS_PER_TEMPLATE):
                text = fill(tpl, pool, rng)
                add(text if v == 0 else noisy(text, rng), label, gid, "template")
        for i, text in enumerate(LITERALS[label]):
            gid = f"{label}/l{i}"
            add(text, label, gid, "literal")
            add(noisy(text, rng), label, gid, "literal")
        for i, text in enumerate(FOREIGN[label]):
            gid = f"{label}/f{i}"
            add(text, label, gid, "foreign")
            add(noisy(text, rng), label, gid, "foreign")
        for i, turns in enumerate(CONVERSATIONS[label]):
            gid = f"{label}/m{i}"
            messages = [{"role": r, "content": c} for r, c in turns]
            for how in ("all", "last", "last-first"):
                add(render(messages, how), label, gid, "conversation", messages)
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    records = build(args.seed)
    with args.out.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    counts = Counter((r["label"], r["split"]) for r in records)
    kinds = Counter(r["kind"] for r in records)
    print(f"wrote {len(records)} prompts to {args.out}")
    print(f"{'label':<8} {'train':>6} {'heldout':>8}")
    for label in LABELS:
        print(f"{label:<8} {counts[label, 'train']:>6} {counts[label, 'heldout']:>8}")
    print("kinds:", dict(kinds))


if __name__ == "__main__":
    main()
