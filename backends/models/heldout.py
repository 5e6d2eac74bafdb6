"""Held-out prompts for benchmarks and tests: from stdlib files no shipped model was trained on."""

from __future__ import annotations

import random

from backends.models import corpus


def heldout_prompts(tokenizer, n: int, seed: int = 0) -> list[tuple[str, list[int]]]:
    """n (kind, prompt token ids): half chat requests built from held-out docstrings (rendered with
    the tokenizer's chat template), half raw code windows of 48-128 tokens (plain completion)."""
    from backends.engine.openai_api import render_chat

    _, held = corpus.split(corpus.stdlib_files())
    rng = random.Random(seed)
    pairs = [p for f in held for p in corpus.chat_pairs(f.text)]
    rng.shuffle(pairs)
    out: list[tuple[str, list[int]]] = []
    for summary, _code in pairs[: n // 2]:
        out.append(("chat", render_chat(tokenizer, [{"role": "user", "content": summary}])))
    encoded = [
        ids for f in held if len(ids := tokenizer.encode(f.text, add_special_tokens=False, verbose=False)) >= 200
    ]
    while len(out) < n:
        ids = rng.choice(encoded)
        length = rng.randint(48, 128)
        start = rng.randrange(0, len(ids) - length)
        out.append(("code", ids[start : start + length]))
    rng.shuffle(out)
    return out
