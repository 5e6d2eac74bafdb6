from __future__ import annotations

import numpy as np
import pytest

from policies.compression import DUPLICATE_MARK, Compressor, find_examples, normalize_whitespace
from policies.lmprune import SurprisalPruner
from policies.relevance import default_embed, join_units, lexical_scores, split_units
from policies.schema import Compression
from policies.tokens import ESTIMATE, HFTokenCounter, count_request

FILLER = [
    "The harbour authority publishes crane schedules every morning.",
    "Container ships usually berth on the eastern quay.",
    "Pilots board incoming vessels two miles offshore.",
    "The customs office closes for lunch between noon and one.",
    "Fog delays are common in late autumn.",
    "Tugboats are dispatched from the northern basin.",
    "Ferry tickets can be bought at the kiosk near gate four.",
    "The lighthouse was automated decades ago.",
]


def filler(n: int, offset: int = 0) -> str:
    return " ".join(f"{FILLER[(i + offset) % len(FILLER)][:-1]} (note {i + offset})." for i in range(n))


def compressor(*steps: str, counter=ESTIMATE, **kw) -> Compressor:
    return Compressor(Compression(steps=list(steps), **kw), counter)


def test_units_round_trip_and_keep_paragraph_breaks():
    text = "First one. Second one!\n\n- item a\n- item b\n\n```py\nx = 1.  y = 2\n```\nLast? Yes."
    units = split_units(text)
    assert join_units(units, [True] * len(units)) == text
    assert [u.text for u in units][:2] == ["First one.", "Second one!"]
    assert any(u.text.startswith("```") and u.text.endswith("```") for u in units)
    keep = [u.text != "Second one!" and not u.text.startswith("- item") for u in units]
    assert join_units(units, keep).startswith("First one.\n\n```py")


def test_lexical_scores_rank_the_sentence_that_shares_rare_words_first():
    units = [*FILLER, "The vault code for the Zephyr archive is 4417."]
    scores = lexical_scores("What is the Zephyr archive vault code?", units)
    assert int(np.argmax(scores)) == len(units) - 1


def test_normalize_collapses_spacing_keeps_code_and_boilerplate_once():
    text = "Hello    world.  \n\n\n\nNext\u200b line.\n```py\ndef f():\n    return   1\n```"
    out = normalize_whitespace(text)
    assert out == "Hello world.\n\nNext line.\n```py\ndef f():\n    return   1\n```"
    footer = "CONFIDENTIAL: this message is intended only for its recipients."
    body = {"messages": [{"role": "user", "content": f"doc {i}\n{footer}"} for i in range(4)]
            + [{"role": "user", "content": "Summarise   the docs."}]}
    res = compressor("normalize").compress("chat", body, target=1)
    msgs = res.body["messages"]
    assert sum(footer in m["content"] for m in msgs) == 1 and msgs[-1]["content"] == "Summarise the docs."
    assert res.steps == ["normalize"] and res.tokens_after < res.tokens_before


def test_dedupe_replaces_older_near_duplicates_and_never_the_last_turn():
    doc = filler(12)
    near = doc.replace("(note 3)", "(note three)")
    body = {"messages": [
        {"role": "system", "content": doc},  # system: never touched
        {"role": "user", "content": doc},
        {"role": "assistant", "content": "Noted, thanks for sharing the harbour notes with me today."},
        {"role": "user", "content": near},
        {"role": "assistant", "content": "Noted, thanks for sharing the harbour notes with me today."},
        {"role": "user", "content": near + " Which gate sells ferry tickets?"},
    ]}
    res = compressor("dedupe").compress("chat", body, target=1)
    msgs = res.body["messages"]
    assert msgs[0]["content"] == doc
    assert msgs[1]["content"] == DUPLICATE_MARK and msgs[3]["content"] == DUPLICATE_MARK
    assert msgs[2]["content"] == DUPLICATE_MARK and msgs[4]["content"] != DUPLICATE_MARK
    assert msgs[5] == body["messages"][5]
    # below the threshold nothing is a duplicate
    res = compressor("dedupe", near_duplicate=1.0).compress("chat", body, target=1)
    assert [m["content"] for m in res.body["messages"]].count(DUPLICATE_MARK) == 1  # only the exact assistant copy


def test_extractive_keeps_the_answer_and_the_question_and_fits():
    ctx = f"{filler(60)} The Zephyr archive vault code is 4417. {filler(60, 3)}"
    body = {"messages": [
        {"role": "system", "content": "Answer from the context only."},
        {"role": "user", "content": f"Read this.\n\n{ctx}\n\nWhat is the vault code of the Zephyr archive?"},
    ]}
    n = count_request("chat", body, ESTIMATE)
    res = compressor("extractive").compress("chat", body, target=n // 4, tokens=n)
    user = res.body["messages"][1]["content"]
    assert res.fits and res.ratio >= 4 and "4417" in user
    assert user.startswith("Read this.") and user.endswith("What is the vault code of the Zephyr archive?")
    assert res.body["messages"][0] == body["messages"][0]
    assert res.tokens_after == count_request("chat", res.body, ESTIMATE)


def test_extractive_with_the_backend_tokenizer_counts_exactly(chat_tokenizer_dir):
    counter = HFTokenCounter(chat_tokenizer_dir)
    body = {"messages": [{"role": "user", "content": f"{filler(80)} Gate 7 sells ferry tickets. Which gate sells ferry tickets?"}]}
    n = count_request("chat", body, counter)
    res = compressor("normalize", "extractive", counter=counter).compress("chat", body, target=n // 2, tokens=n)
    assert res.fits and res.tokens_after == count_request("chat", res.body, counter)
    assert "Gate 7" in res.body["messages"][0]["content"]


def test_steps_stop_once_the_prompt_fits():
    messy = "\n\n\n\n".join(f"Line {i}.      Tabbed\t\t\tout.     " for i in range(20))
    body = {"messages": [{"role": "user", "content": messy + filler(30) + " What now?"}]}
    n = count_request("chat", body, ESTIMATE)
    res = compressor("normalize", "extractive").compress("chat", body, target=n - 20, tokens=n)
    assert res.steps == ["normalize"] and res.fits


def test_completions_prompt_is_compressed_as_one_text():
    prompt = f"{filler(50)} The password is swordfish. What is the password?"
    n = count_request("completions", {"prompt": prompt}, ESTIMATE)
    res = compressor("extractive").compress("completions", {"prompt": prompt}, target=n // 3, tokens=n)
    assert res.fits and "swordfish" in res.body["prompt"] and res.body["prompt"].endswith("What is the password?")
    batch = compressor("extractive").compress("completions", {"prompt": ["a", "b"]}, target=1, tokens=2)
    assert not batch.fits and batch.skipped


@pytest.fixture(scope="module")
def embed():
    return default_embed  # the real all-MiniLM-L6-v2


def test_fewshot_keeps_the_examples_nearest_the_question(embed):
    examples = [
        ("Translate to French: cat", "chat"),
        ("What is 12 times 3?", "36"),
        ("Translate to French: dog", "chien"),
        ("What is 7 plus 5?", "12"),
        ("Is this review positive? 'Terrible food.'", "negative"),
        ("Translate to French: house", "maison"),
        ("What is 9 minus 4?", "5"),
    ]
    msgs = [{"role": "system", "content": "Answer like the examples."}]
    for q, a in examples:
        msgs += [{"role": "user", "name": "example_user", "content": q},
                 {"role": "assistant", "name": "example_assistant", "content": a}]
    msgs.append({"role": "user", "content": "What is 8 times 6?"})
    body = {"messages": msgs}
    assert len(find_examples(msgs, len(msgs) - 1)) == 7
    n = count_request("chat", body, ESTIMATE)
    comp = Compressor(Compression(steps=["fewshot"], fewshot_keep=2), ESTIMATE, embed=embed)
    res = comp.compress("chat", body, target=n - 45, tokens=n)
    kept = [m["content"] for m in res.body["messages"] if m.get("name") == "example_user"]
    assert res.fits and len(kept) < 7
    assert "What is 12 times 3?" in kept  # the nearest example survives
    assert res.body["messages"][-1]["content"] == "What is 8 times 6?"
    for i, m in enumerate(res.body["messages"]):  # pairs stay pairs
        if m.get("name") == "example_user":
            assert res.body["messages"][i + 1].get("name") == "example_assistant"


def test_fewshot_in_text_blocks_never_drops_the_final_question(embed):
    blocks = "\n".join(f"Q: What is the capital of {c}?\nA: {a}" for c, a in
                       [("France", "Paris"), ("Peru", "Lima"), ("Kenya", "Nairobi"), ("Japan", "Tokyo")])
    arith = "\n".join(f"Q: What is {i} plus {i}?\nA: {2 * i}" for i in range(3, 7))
    prompt = f"{blocks}\n{arith}\nQ: What is the capital of Chile?\nA:"
    n = count_request("completions", {"prompt": prompt}, ESTIMATE)
    comp = Compressor(Compression(steps=["fewshot"], fewshot_keep=1), ESTIMATE, embed=embed)
    res = comp.compress("completions", {"prompt": prompt}, target=n // 2, tokens=n)
    out = res.body["prompt"]
    assert res.fits and out.endswith("Q: What is the capital of Chile?\nA:")
    assert "plus" not in out and out.count("capital") >= 3  # geography examples outlast arithmetic ones


def test_lm_prune_is_skipped_cleanly_without_a_model(tmp_path):
    body = {"messages": [{"role": "user", "content": filler(40) + " What now?"}]}
    n = count_request("chat", body, ESTIMATE)
    comp = compressor("lm_prune", lm_model=str(tmp_path / "no-model"))
    res = comp.compress("chat", body, target=n // 2, tokens=n)
    assert res.steps == [] and "lm_prune" in res.skipped and not res.fits and res.body is body


def test_lm_prune_drops_low_surprisal_words_and_keeps_the_question(tiny_lm_dir):
    pruner = SurprisalPruner(tiny_lm_dir)
    spans, s, n = pruner.word_surprisal("the cat sat on the mat")
    assert len(spans) == 6 and s.shape == (6,) and np.all(s >= 0) and np.all(n >= 1)
    assert pruner.prune(["the cat sat on the mat"], 0.0) == ["the cat sat on the mat"]
    assert len(pruner.prune(["the cat sat on the mat"], 0.5)[0].split()) == 3
    body = {"messages": [{"role": "user", "content": filler(30) + "\nWhere do pilots board incoming vessels?"}]}
    n = count_request("chat", body, ESTIMATE)
    comp = compressor("lm_prune", lm_model=str(tiny_lm_dir))
    res = comp.compress("chat", body, target=int(n * 0.6), tokens=n)
    out = res.body["messages"][0]["content"]
    assert res.steps == ["lm_prune"] and res.fits
    assert out.endswith("Where do pilots board incoming vessels?")
    kept_words = out.split()
    assert set(kept_words) <= set(body["messages"][0]["content"].split())  # words dropped, never invented


def test_truncate_as_last_step():
    body = {"messages": [{"role": "system", "content": "Be nice."}]}
    for i in range(10):
        body["messages"] += [{"role": "user", "content": f"Question {i}?"}, {"role": "assistant", "content": f"Answer {i}."}]
    body["messages"].append({"role": "user", "content": "Last one?"})
    n = count_request("chat", body, ESTIMATE)
    res = compressor("normalize", "truncate").compress("chat", body, target=n - 30, tokens=n)
    assert res.fits and res.steps[-1] == "truncate" and res.dropped_turns > 0
    assert res.body["messages"][0]["content"] == "Be nice." and res.body["messages"][-1]["content"] == "Last one?"
