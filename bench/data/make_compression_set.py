"""Write bench/data/compression_set.jsonl: the prompts `bench/compression.py` compresses.

    python bench/data/make_compression_set.py

Three kinds, all seeded, with filler prose from the standard library's docstrings (text every machine
with Python has, and that no planted fact can accidentally answer):

* `rag`     – ~4k-token prompts: a system instruction, then numbered documents and a question in the user
              turn. One document holds the planted answer sentence; two others hold decoys built from the
              same template about other entities. Half the questions reuse the answer's words, half
              paraphrase them.
* `chat`    – long conversations (~3-4k tokens): the planted fact is said by the user in an early turn,
              a pasted document is repeated, and the last turn asks for the fact.
* `fewshot` – 16 examples of 4 tasks as example_user/example_assistant pairs; the question belongs to
              one task. "Retained" means at least one example of that task survives.

Each line: {"kind", "id", "body" (OpenAI chat body), "answer" (string that must survive), ...}.
"""

from __future__ import annotations

import importlib
import inspect
import json
import random
import re
from pathlib import Path

OUT = Path(__file__).with_name("compression_set.jsonl")
MODULES = ["asyncio", "collections", "json", "logging", "argparse", "email", "http.client", "urllib.request",
           "threading", "subprocess", "pathlib", "datetime", "decimal", "fractions", "statistics", "csv",
           "sqlite3", "zipfile", "tarfile", "shutil", "tempfile", "unittest", "typing", "dataclasses",
           "functools", "itertools", "contextlib", "socket", "ssl", "selectors", "queue", "heapq", "bisect",
           "textwrap", "difflib", "string", "re", "struct", "codecs", "pickle", "copy", "pprint", "enum"]

ENTITIES = ["Halvorsen", "Zephyr", "Quillon", "Marrowby", "Ostrava", "Kestrel", "Varnholt", "Brightwater",
            "Tamsin", "Orrery", "Calloway", "Dunmore", "Fenwick", "Isolde", "Juniper", "Lathrop"]
PEOPLE = ["Amara Osei", "Bruno Keller", "Chiara Russo", "Dmitri Volkov", "Elif Demir", "Farah Haddad",
          "Goran Petrovic", "Hana Sato", "Ines Moreau", "Jonas Berg"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# (fact template, value maker, question using the fact's words, paraphrased question)
FACTS = [
    ("The maintenance window for the {e} cluster begins at {v} UTC every {d}.",
     lambda r: f"{r.randint(0, 23):02d}:{r.choice([10, 20, 40, 50])}",
     "When does the maintenance window for the {e} cluster begin?",
     "At what time is the {e} cluster taken offline for upkeep?"),
    ("The access code for the {e} vault is {v}.", lambda r: str(r.randint(1000, 9999)),
     "What is the access code for the {e} vault?", "Which number opens the {e} vault?"),
    ("{p} was appointed head of the {e} laboratory in {v}.", lambda r: str(r.randint(1961, 2019)),
     "In which year was {p} appointed head of the {e} laboratory?", "Since when has {p} led the {e} lab?"),
    ("The {e} footbridge is {v} metres long.", lambda r: str(r.randint(120, 990)),
     "How long is the {e} footbridge?", "What length does the {e} footbridge span?"),
    ("Shipments to the {e} depot leave the warehouse every {v} morning.", lambda r: r.choice(DAYS),
     "On which day do shipments to the {e} depot leave the warehouse?",
     "When are deliveries bound for the {e} depot dispatched?"),
    ("The {e} reservoir holds {v} million cubic metres of water.", lambda r: str(r.randint(11, 97)),
     "How much water does the {e} reservoir hold?", "What is the capacity of the {e} reservoir?"),
]


def paragraphs() -> list[str]:
    out: list[str] = []
    for name in MODULES:
        mod = importlib.import_module(name)
        for _, obj in sorted(inspect.getmembers(mod), key=lambda x: x[0]):
            doc = inspect.getdoc(obj) if (inspect.isclass(obj) or inspect.isfunction(obj)) else None
            for para in (doc or "").split("\n\n"):
                para = " ".join(para.split())
                if 150 <= len(para) <= 900 and ">>>" not in para and not re.search(r"[{}=\[\]]{2}", para):
                    out.append(para)
    return sorted(set(out))


def fact(rng: random.Random, k: int, entity: str):
    tpl, value, q_lex, q_para = FACTS[k]
    v, d, p = value(rng), rng.choice(DAYS), rng.choice(PEOPLE)
    return tpl.format(e=entity, v=v, d=d, p=p), v, q_lex.format(e=entity, p=p), q_para.format(e=entity, p=p)


def documents(rng: random.Random, paras: list[str], chars: int) -> list[str]:
    docs, total = [], 0
    while total < chars:
        doc = " ".join(rng.sample(paras, rng.randint(2, 4)))
        docs.append(doc)
        total += len(doc)
    return docs


def insert_sentence(rng: random.Random, doc: str, sentence: str) -> str:
    cuts = [m.end() for m in re.finditer(r"[.!?] ", doc)] or [len(doc)]
    at = rng.choice(cuts)
    return doc[:at] + sentence + " " + doc[at:]


def rag_items(rng: random.Random, paras: list[str], n: int) -> list[dict]:
    items = []
    for i in range(n):
        k = i % len(FACTS)
        ent, *decoys = rng.sample(ENTITIES, 3)
        sentence, answer, q_lex, q_para = fact(rng, k, ent)
        docs = documents(rng, paras, 15500)
        slots = rng.sample(range(len(docs)), 3)
        docs[slots[0]] = insert_sentence(rng, docs[slots[0]], sentence)
        for s, d in zip(slots[1:], decoys, strict=True):
            decoy, decoy_value, *_ = fact(rng, k, d)
            if decoy_value == answer:
                continue
            docs[s] = insert_sentence(rng, docs[s], decoy)
        question = q_lex if i % 2 == 0 else q_para
        listing = "\n\n".join(f"[{j + 1}] {d}" for j, d in enumerate(docs))
        body = {"messages": [
            {"role": "system", "content": "You answer questions using only the documents the user provides."},
            {"role": "user", "content": f"Documents:\n\n{listing}\n\nQuestion: {question}"},
        ]}
        items.append({"kind": "rag", "id": f"rag-{i}", "body": body, "answer": answer,
                      "question_style": "lexical" if i % 2 == 0 else "paraphrase"})
    return items


def chat_items(rng: random.Random, paras: list[str], n: int) -> list[dict]:
    items = []
    for i in range(n):
        k = i % len(FACTS)
        ent = rng.choice(ENTITIES)
        sentence, answer, q_lex, q_para = fact(rng, k, ent)
        msgs = [{"role": "system", "content": "You are a helpful assistant for a Python team."}]
        pasted = " ".join(rng.sample(paras, 3))
        n_turns = rng.randint(12, 16)
        fact_turn = rng.randint(1, 3)
        repeat_turns = set(rng.sample(range(4, n_turns), 2))
        for t in range(n_turns):
            if t == fact_turn:
                user = f"Before I forget, a note for later: {sentence} Anyway, back to the code."
            elif t in repeat_turns:
                user = f"Here is the passage again, can you explain it?\n\n{pasted}"
            else:
                user = f"Can you explain this part of the docs? {rng.choice(paras)}"
            msgs.append({"role": "user", "content": user})
            msgs.append({"role": "assistant", "content": " ".join(rng.sample(paras, 2))})
        question = q_lex if i % 2 == 0 else q_para
        msgs.append({"role": "user", "content": f"One more thing from earlier. {question}"})
        items.append({"kind": "chat", "id": f"chat-{i}", "body": {"messages": msgs}, "answer": answer,
                      "question_style": "lexical" if i % 2 == 0 else "paraphrase"})
    return items


TASKS = {
    "capital": [(f"What is the capital of {c}?", a) for c, a in [
        ("France", "Paris"), ("Peru", "Lima"), ("Kenya", "Nairobi"), ("Japan", "Tokyo"), ("Norway", "Oslo"),
        ("Egypt", "Cairo"), ("Chile", "Santiago"), ("Canada", "Ottawa"), ("Poland", "Warsaw"), ("Ghana", "Accra")]],
    "arithmetic": [(f"What is {a} times {b}?", str(a * b)) for a, b in
                   [(3, 7), (6, 8), (9, 4), (12, 5), (7, 7), (11, 3), (8, 9), (4, 15), (6, 6), (13, 2)]],
    "antonym": [(f"Give the opposite of the word '{w}'.", o) for w, o in [
        ("hot", "cold"), ("early", "late"), ("heavy", "light"), ("open", "closed"), ("rich", "poor"),
        ("wide", "narrow"), ("loud", "quiet"), ("smooth", "rough"), ("strong", "weak"), ("empty", "full")]],
    "sentiment": [(f"Is this review positive or negative? \"{r}\"", s) for r, s in [
        ("The soup was cold and the waiter ignored us.", "negative"), ("Lovely staff, great view.", "positive"),
        ("I would never stay here again.", "negative"), ("Best pastry I have had in years!", "positive"),
        ("The room smelled of smoke.", "negative"), ("Quick delivery and it works perfectly.", "positive"),
        ("Broke after two days.", "negative"), ("A delight from start to finish.", "positive"),
        ("Overpriced and bland.", "negative"), ("Friendly, clean and quiet.", "positive")]],
}


def fewshot_items(rng: random.Random, n: int) -> list[dict]:
    items = []
    names = sorted(TASKS)
    for i in range(n):
        task = names[i % len(names)]
        pool = [(t, q, a) for t in names for q, a in TASKS[t][:-1]]
        shots = rng.sample(pool, 16)
        while not any(t == task for t, _, _ in shots):
            shots = rng.sample(pool, 16)
        msgs = [{"role": "system", "content": "Answer exactly in the style of the examples, with one word or number."}]
        for _, q, a in shots:
            msgs.append({"role": "user", "name": "example_user", "content": q})
            msgs.append({"role": "assistant", "name": "example_assistant", "content": a})
        q, a = TASKS[task][-1]
        msgs.append({"role": "user", "content": q})
        items.append({"kind": "fewshot", "id": f"fewshot-{i}", "body": {"messages": msgs}, "answer": a,
                      "task": task, "task_examples": [q for t, q, _ in shots if t == task]})
    return items


def main() -> None:
    rng = random.Random(20261129)
    paras = paragraphs()
    items = rag_items(rng, paras, 40) + chat_items(rng, paras, 30) + fewshot_items(rng, 24)
    with OUT.open("w") as f:
        for it in items:
            f.write(json.dumps(it) + "\n")
    print(f"wrote {len(items)} prompts from {len(paras)} docstring paragraphs to {OUT}")


if __name__ == "__main__":
    main()
