"""Routing rules: class → pool, cascade, header override, explicit model names, the schema."""

from __future__ import annotations

import pydantic
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from policies.routing import (
    RouteError,
    RouteForbidden,
    UnknownModel,
    UnknownRoute,
    decide_route,
    embedded_default,
    looks_like_refusal,
)
from policies.schema import RoutingPolicy, Tenant

POOLS = ("small", "coder", "mathy", "large", "huge")
MODEL_POOLS = {"auto": "large", "small": "small", "large": "large", "gpt-4o": "huge"}

POLICY_YAML = """
rules:
  - name: faq
    when: {classes: [simple], max_prompt_tokens: 2000}
    pool: small
  - name: code
    when: {classes: [code]}
    pool: coder
    escalate_to: [large, huge]
  - when: {classes: [math]}
    pool: mathy
  - name: long-complex
    when: {classes: [complex], min_prompt_tokens: 4000}
    pool: huge
default_pool: large
cascade:
  ladder: [small, large, huge]
  min_confidence: 0.6
"""
POLICY = RoutingPolicy.model_validate(yaml.safe_load(POLICY_YAML))


def route(policy=POLICY, model="auto", *, cls=None, conf=None, tokens=100, header=None, available=POOLS):
    return decide_route(
        policy, model, model_pools=MODEL_POOLS, available_pools=available,
        task_class=cls, confidence=conf, prompt_tokens=tokens, header_route=header,
    )


@pytest.mark.parametrize(
    ("cls", "pool"), [("simple", "small"), ("code", "coder"), ("math", "mathy"), ("complex", "large")]
)
def test_every_class_goes_to_the_pool_the_policy_names(cls, pool):
    d = route(cls=cls, conf=0.95)
    assert d.pool == pool
    assert d.source == ("default" if cls == "complex" else "rule")


def test_rule_names_and_reasons_explain_the_decision():
    d = route(cls="simple", conf=0.9)
    assert d.rule == "faq" and "class=simple" in d.reason and "0.90" in d.reason
    assert route(cls="math", conf=0.9).rule == "rules[2]"  # unnamed rules are named by position


def test_prompt_token_ranges():
    assert route(cls="simple", conf=0.9, tokens=2000).pool == "small"
    assert route(cls="simple", conf=0.9, tokens=2001).pool == "large"  # falls through to the default
    assert route(cls="complex", conf=0.9, tokens=4000).pool == "huge"
    assert route(cls="complex", conf=0.9, tokens=None).pool == "large"  # unknown count never matches a range


def test_confidence_bounds_on_a_rule():
    policy = RoutingPolicy.model_validate({
        "rules": [
            {"when": {"classes": ["simple"], "min_confidence": 0.8}, "pool": "small"},
            {"when": {"classes": ["simple"], "max_confidence": 0.8}, "pool": "large"},
        ],
    })
    assert route(policy, cls="simple", conf=0.8).pool == "small"
    assert route(policy, cls="simple", conf=0.79).pool == "large"
    assert route(policy, cls="simple", conf=None).pool == "large"  # via the auto model's pool


def test_first_matching_rule_wins():
    policy = RoutingPolicy.model_validate({
        "rules": [{"when": {"classes": ["code"]}, "pool": "coder"}, {"when": {}, "pool": "huge"}],
    })
    assert route(policy, cls="code", conf=0.9).pool == "coder"
    assert route(policy, cls="math", conf=0.9).pool == "huge"  # the empty match catches the rest


def test_escalation_follows_the_ladder_or_the_rules_own_list():
    assert route(cls="simple", conf=0.9).pools == ("small", "large", "huge")
    assert route(cls="code", conf=0.9).pools == ("coder", "large", "huge")
    assert route(cls="math", conf=0.9).pools == ("mathy",)  # not on the ladder, no escalate_to
    assert route(cls="complex", conf=0.9).pools == ("large", "huge")


def test_low_confidence_cascades_one_rung_up():
    d = route(cls="simple", conf=0.55)
    assert d.pools == ("large", "huge") and d.cascaded
    assert "escalated past small" in d.reason
    assert not route(cls="simple", conf=0.6).cascaded  # the threshold itself is confident enough
    # Nowhere further to go: the chosen pool is kept rather than failing the request.
    assert route(cls="math", conf=0.1).pools == ("mathy",)


def test_unavailable_pools_are_skipped_in_order():
    d = route(cls="simple", conf=0.9, available=("large", "huge"))
    assert d.pools == ("large", "huge") and "small unavailable" in d.reason
    with pytest.raises(RouteError) as e:
        route(cls="math", conf=0.9, available=("small",))
    assert e.value.status == 503


def test_no_classification_uses_the_default_pool():
    d = route(cls=None, conf=None)
    assert d.pool == "large" and d.source == "default"


def test_auto_without_default_uses_the_auto_models_pool():
    policy = RoutingPolicy.model_validate({"rules": [{"when": {"classes": ["code"]}, "pool": "coder"}]})
    assert route(policy, cls="simple", conf=0.9).pools == ("large",)
    with pytest.raises(RouteError):
        decide_route(policy, "auto", model_pools={}, available_pools=POOLS, task_class="simple", confidence=0.9)


# --- header override -------------------------------------------------------------------------------


def test_header_override_refused_unless_allowed():
    with pytest.raises(RouteForbidden) as e:
        route(cls="simple", conf=0.9, header="huge")
    assert e.value.status == 403 and e.value.param == "x-switchyard-route"


def test_header_override_when_allowed():
    policy = POLICY.model_copy(update={"allow_header_override": True})
    d = route(policy, cls="simple", conf=0.9, header="huge")
    assert d.pools == ("huge",) and d.source == "header"
    with pytest.raises(UnknownRoute) as e:
        route(policy, header="nope")
    assert e.value.status == 400


# --- explicit model names --------------------------------------------------------------------------


def test_explicit_model_is_honoured_by_default():
    d = route(model="gpt-4o", cls="simple", conf=0.99)
    assert d.pools == ("huge",) and d.source == "model"
    assert route(model="small", cls="math", conf=0.2).pools == ("small",)  # no cascade off the client's choice


def test_explicit_model_refused_when_the_policy_forbids_it():
    policy = POLICY.model_copy(update={"explicit_models": "refuse"})
    with pytest.raises(RouteForbidden) as e:
        route(policy, model="gpt-4o", cls="simple", conf=0.9)
    assert e.value.status == 403 and e.value.param == "model"
    assert route(policy, cls="simple", conf=0.9).pool == "small"  # auto still works


def test_explicit_model_routed_by_the_rules_when_the_policy_says_so():
    policy = POLICY.model_copy(update={"explicit_models": "route"})
    # Rerouted by a rule; should that fail, the model the client named is the last resort.
    assert route(policy, model="gpt-4o", cls="simple", conf=0.9).pools == ("small", "large", "huge")
    assert route(policy, model="gpt-4o", cls="complex", conf=0.9).pools == ("huge",)  # no rule: its own pool


def test_rule_naming_a_model_applies_to_it_even_when_honouring():
    policy = RoutingPolicy.model_validate({
        "rules": [{"when": {"models": ["gpt-4o"], "classes": ["simple"]}, "pool": "small"}],
    })
    assert route(policy, model="gpt-4o", cls="simple", conf=0.9).pools == ("small", "huge")
    assert route(policy, model="gpt-4o", cls="code", conf=0.9).pools == ("huge",)
    assert route(policy, model="auto", cls="simple", conf=0.9).pool == "large"  # the rule is for gpt-4o only


def test_unknown_explicit_model():
    with pytest.raises(UnknownModel) as e:
        route(model="nope")
    assert e.value.status == 404


def test_tenant_model_list_still_gates_names():
    # Routing runs after the gateway's tenant check; a tenant limited to `auto` cannot name a model.
    tenant = Tenant.model_validate({"keys": [{"sha256": "a" * 64}], "models": ["auto"], "routing": yaml.safe_load(POLICY_YAML)})
    assert tenant.may_use("auto") and not tenant.may_use("gpt-4o")
    assert tenant.routing == POLICY


# --- schema ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"rules": [{"when": {"classes": ["smple"]}, "pool": "x"}]}, "rules.0.when.classes.0"),
        ({"rules": [{"when": {"min_confidence": 0.9, "max_confidence": 0.5}, "pool": "x"}]}, "rules.0.when.max_confidence"),
        ({"rules": [{"when": {"min_prompt_tokens": 10, "max_prompt_tokens": 5}, "pool": "x"}]}, "rules.0.when.max_prompt_tokens"),
        ({"rules": [{"pool": "x", "escalate_to": ["x"]}]}, "rules.0.escalate_to"),
        ({"rules": [{"when": {"clases": ["code"]}, "pool": "x"}]}, "rules.0.when.clases"),
        ({"cascade": {"ladder": ["a", "b", "a"]}}, "cascade.ladder"),
        ({"cascade": {"min_confidence": 1.5}}, "cascade.min_confidence"),
        ({"explicit_models": "maybe"}, "explicit_models"),
    ],
)
def test_policy_mistakes_are_errors_with_their_field(doc, where):
    with pytest.raises(pydantic.ValidationError) as e:
        RoutingPolicy.model_validate(doc)
    assert where in str(e.value)


def test_pool_refs_name_every_pool_with_its_path():
    refs = dict(POLICY.pool_refs())
    assert refs[("rules", 1, "escalate_to", 1)] == "huge"
    assert refs[("cascade", "ladder", 0)] == "small"
    assert refs[("default_pool",)] == "large"
    assert {p for _, p in POLICY.pool_refs()} == {"small", "coder", "mathy", "large", "huge"}


def test_needs_classification():
    assert POLICY.needs_classification
    assert not RoutingPolicy.model_validate({"rules": [{"when": {"max_prompt_tokens": 10}, "pool": "s"}]}).needs_classification


def test_embedded_default_sends_confident_simple_prompts_to_small():
    policy = embedded_default()
    kw = {"model_pools": {"auto": "large", "small": "small", "large": "large"}, "available_pools": ("small", "large")}
    assert decide_route(policy, "auto", task_class="simple", confidence=0.9, **kw).pools == ("small", "large")
    assert decide_route(policy, "auto", task_class="simple", confidence=0.4, **kw).pools == ("large",)
    for cls in ("complex", "code", "math"):
        assert decide_route(policy, "auto", task_class=cls, confidence=0.9, **kw).pools == ("large",)


@given(
    cls=st.sampled_from([None, "simple", "complex", "code", "math"]),
    conf=st.none() | st.floats(0, 1),
    tokens=st.none() | st.integers(0, 10_000),
    model=st.sampled_from(list(MODEL_POOLS)),
    available=st.sets(st.sampled_from(POOLS), min_size=1),
)
def test_any_decision_is_a_nonempty_ordered_subset_of_available_pools(cls, conf, tokens, model, available):
    try:
        d = route(model=model, cls=cls, conf=conf, tokens=tokens, available=available)
    except RouteError as e:
        assert e.status == 503  # only "nothing available" can fail this policy
        return
    assert d.pools and set(d.pools) <= available and len(set(d.pools)) == len(d.pools)


# --- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but I can't help with that.",
        "I cannot assist with this request.",
        "Sorry, but I can’t provide that information.",
        "As an AI language model, I cannot write that.",
        "I am unable to complete this task.",
        "  I won't help with that.",
    ],
)
def test_refusals_are_recognised(text):
    assert looks_like_refusal(text)


@pytest.mark.parametrize(
    "text",
    [
        "Sure! Here is the email you asked for.",
        "I can help with that. First, ...",
        "The function cannot return None because ...",
        "Our return policy allows refunds within 30 days. I can't stress enough how easy it is.",
        "",
    ],
)
def test_answers_are_not_refusals(text):
    assert not looks_like_refusal(text)
