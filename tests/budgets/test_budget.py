from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.budget import evaluate, evaluate_async
from policies.schema import Budgets, Compression
from policies.tokens import ESTIMATE, HFTokenCounter, count_request
from policies.truncate import droppable_turns, truncate_messages


def chat(*turns: str, system: str | None = "Be brief.") -> dict:
    msgs = [{"role": "system", "content": system}] if system else []
    for i, t in enumerate(turns):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": t})
    return {"model": "m", "messages": msgs}


@pytest.fixture(scope="module", params=["estimate", "hf-template"])
def counter(request, chat_tokenizer_dir):
    return ESTIMATE if request.param == "estimate" else HFTokenCounter(chat_tokenizer_dir)


# --- exact boundaries -----------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["reject", "truncate", "compress"])
def test_input_budget_is_exact_n_passes_n_plus_one_does_not(counter, policy):
    body = chat("Tell me about the weather in Lisbon in spring, in two sentences.")
    n = count_request("chat", body, counter)
    ok = evaluate("chat", body, Budgets(max_input_tokens=n, on_input_over=policy), n, counter)
    assert ok.action == "pass" and ok.body is body and ok.tokens_after == n
    # One token less of budget: over it, and nothing can be dropped or shortened → refused.
    over = evaluate("chat", body, Budgets(max_input_tokens=n - 1, on_input_over=policy), n, counter)
    assert over.action == "reject"
    assert "max_input_tokens" in over.message and str(n) in over.message and str(n - 1) in over.message
    assert over.error()["status"] == 400 and over.error()["code"] == "input_budget_exceeded"


def test_total_budget_leaves_room_for_one_output_token_and_clamps_output(counter):
    body = {**chat("Hello there, how are you?"), "max_tokens": 500}
    n = count_request("chat", body, counter)
    edge = evaluate("chat", body, Budgets(max_total_tokens=n + 1), n, counter)
    assert edge.action == "pass" and edge.clamped_to == 1 and edge.body["max_tokens"] == 1
    assert edge.headers()["x-switchyard-max-tokens-clamped"] == "1"
    over = evaluate("chat", body, Budgets(max_total_tokens=n), n, counter)
    assert over.action == "reject" and "max_total_tokens" in over.message
    roomy = evaluate("chat", body, Budgets(max_total_tokens=n + 200), n, counter)
    assert roomy.clamped_to == 200 and roomy.reservation(256) == n + 200


def test_output_clamp_lowers_fills_in_and_leaves_smaller_requests_alone():
    b = Budgets(max_output_tokens=100)
    asked_more = {**chat("hi"), "max_tokens": 1000}
    d = evaluate("chat", asked_more, b, 10, ESTIMATE)
    assert d.body["max_tokens"] == 100 and d.clamped_to == 100 and asked_more["max_tokens"] == 1000
    d = evaluate("chat", {**chat("hi"), "max_completion_tokens": 1000}, b, 10, ESTIMATE)
    assert d.body["max_completion_tokens"] == 100 and "max_tokens" not in d.body
    d = evaluate("chat", chat("hi"), b, 10, ESTIMATE)  # unbounded request gets the bound
    assert d.body["max_tokens"] == 100 and d.clamped_to == 100
    d = evaluate("chat", {**chat("hi"), "max_tokens": 100}, b, 10, ESTIMATE)
    assert d.clamped_to is None and d.headers() == {} and d.max_output_tokens == 100
    d = evaluate("completions", {"prompt": "x", "max_tokens": 900}, b, 1, ESTIMATE)
    assert d.body["max_tokens"] == 100
    # n choices share the total budget
    d = evaluate("chat", {**chat("hi"), "n": 4}, Budgets(max_total_tokens=410), 10, ESTIMATE)
    assert d.max_output_tokens == 100 and d.reservation(256) == 410
    unbounded = evaluate("chat", {**chat("hi"), "n": 2}, Budgets(), 10, ESTIMATE)
    assert unbounded.max_output_tokens is None and unbounded.reservation(256) == 10 + 2 * 256


def test_truncate_drops_oldest_turns_only_as_many_as_needed(counter):
    turns = [f"Message number {i} talks about topic {i} at some length for the test." for i in range(12)]
    body = chat(*turns, "What was the first topic?")
    n = count_request("chat", body, counter)
    target = n - 40
    d = evaluate("chat", body, Budgets(max_input_tokens=target, on_input_over="truncate"), n, counter)
    assert d.action == "truncate" and d.tokens_after <= target
    assert d.tokens_after == count_request("chat", d.body, counter)
    msgs = d.body["messages"]
    assert msgs[0]["role"] == "system" and msgs[-1]["content"] == "What was the first topic?"
    assert d.dropped_turns >= 1 and d.headers()["x-switchyard-truncated-turns"] == str(d.dropped_turns)
    # Minimal: keeping one more turn would not have fitted.
    fewer, _, fewer_n = truncate_messages(body["messages"], 10**9, lambda m: count_request("chat", {"messages": m}, counter))
    assert fewer_n == n
    turns_all = droppable_turns(body["messages"])
    gone = {i for t in turns_all[: d.dropped_turns - 1] for i in t}
    one_less = [m for i, m in enumerate(body["messages"]) if i not in gone]
    assert count_request("chat", {"messages": one_less}, counter) > target


def test_truncate_refuses_completions_and_unfittable_chats():
    d = evaluate("completions", {"prompt": "x " * 200}, Budgets(max_input_tokens=5, on_input_over="truncate"), 200, ESTIMATE)
    assert d.action == "reject" and "completions" in d.message
    body = chat("old turn", "old answer", "a very long last question " * 50)
    n = count_request("chat", body, ESTIMATE)
    d = evaluate("chat", body, Budgets(max_input_tokens=50, on_input_over="truncate"), n, ESTIMATE)
    assert d.action == "reject" and "never dropped" in d.message


# --- truncation property ------------------------------------------------------------------------------

_roles = st.sampled_from(["user", "assistant", "system", "tool", "developer"])
_message = st.builds(lambda r, t: {"role": r, "content": t}, _roles, st.text(min_size=0, max_size=60))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_message, min_size=1, max_size=25), st.integers(min_value=1, max_value=600))
def test_truncation_never_drops_system_prompts_or_the_last_user_turn(messages, target):
    def count(m):
        return ESTIMATE.count_messages(m)

    kept, dropped, after = truncate_messages(messages, target, count)
    ids = [id(m) for m in kept]
    assert ids == sorted(ids, key=[id(m) for m in messages].index)  # order kept, nothing invented
    for m in messages:
        if m["role"] in ("system", "developer"):
            assert any(k is m for k in kept)
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=None)
    if last_user is not None:
        tail = messages[last_user:]
        assert kept[-len(tail):] == tail and all(a is b for a, b in zip(kept[-len(tail):], tail, strict=True))
    assert after == count(kept)
    if after > target:  # could not fit: then every droppable turn is gone
        assert dropped == len(droppable_turns(messages))
    if dropped:  # never more than needed
        gone = {i for t in droppable_turns(messages)[: dropped - 1] for i in t}
        assert count([m for i, m in enumerate(messages) if i not in gone]) > target
    # a dropped turn never leaves an assistant or tool message as the first non-system message of the rest
    rest = [m for m in kept if m["role"] not in ("system", "developer")]
    if dropped and rest:
        assert rest[0]["role"] == "user"


# --- compress through the budget -------------------------------------------------------------------------


def test_compress_fits_the_budget_and_says_what_ran():
    filler = " ".join(f"Paragraph {i} describes the harbour's cargo cranes and their schedules." for i in range(120))
    body = chat(f"Context follows. {filler} The vault code is 4417. {filler} What is the vault code?")
    n = count_request("chat", body, ESTIMATE)
    budget = Budgets(max_input_tokens=n // 3, on_input_over="compress", max_output_tokens=64)
    d = evaluate("chat", body, budget, n, ESTIMATE)
    assert d.action == "compress" and d.tokens_after <= n // 3 and d.ratio >= 3
    assert "4417" in d.body["messages"][1]["content"] and d.body["messages"][0] == body["messages"][0]
    assert "extractive" in d.steps and d.tokens_after == count_request("chat", d.body, ESTIMATE)
    h = d.headers()["x-switchyard-compression"]
    assert h.startswith("ratio=") and "extractive" in h
    assert d.log_fields()["compression_steps"] == list(d.steps)
    d.observe()


def test_compress_rejects_when_the_steps_cannot_reach_the_budget():
    body = chat("Short question, nothing to squeeze out of it at all?")
    n = count_request("chat", body, ESTIMATE)
    d = evaluate("chat", body, Budgets(max_input_tokens=n - 5, on_input_over="compress",
                                       compression=Compression(steps=["normalize", "extractive"])), n, ESTIMATE)
    assert d.action == "reject" and "compression" in d.message


async def test_evaluate_async_matches_evaluate():
    filler = " ".join(f"Sentence {i} is about nothing in particular." for i in range(200))
    body = chat(f"{filler} Where is the key? It is under the mat. What is under the mat?")
    n = count_request("chat", body, ESTIMATE)
    b = Budgets(max_input_tokens=n // 2, on_input_over="compress")
    a = await evaluate_async("chat", body, b, n, ESTIMATE)
    s = evaluate("chat", body, b, n, ESTIMATE)
    assert (a.action, a.tokens_after, a.body) == (s.action, s.tokens_after, s.body)
