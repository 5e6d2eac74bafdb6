"""Routing decisions: which backend pools serve a request, in the order to try them.

Pure functions of the tenant's `RoutingPolicy` and what earlier steps found (class, confidence, prompt
tokens), so every route can be explained and tested without a network. The gateway calls
`decide_route` once per request and tries `decision.pools` in order: the first pool serves, and a
failure before the first byte (or a refusal, see `looks_like_refusal`) escalates to the next one.

Order of precedence:
1. `x-switchyard-route: <pool>` header — only when the policy allows it (else `RouteForbidden`, 403).
2. An explicit model name — its own pool (`explicit_models: honour`, the default), the rules
   (`route`), or `RouteForbidden` (`refuse`). Rules that list the model by name apply in every mode.
3. `auto` — the first matching rule, else `default_pool`, else the `auto` model's pool.
Cascade: the pools after the chosen one are the rule's `escalate_to`, or the ladder rungs above it;
a classification below `cascade.min_confidence` skips the chosen pool and starts one rung up. A named
model that the rules sent elsewhere keeps its own pool as the last resort.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from policies.schema import AUTO_MODEL, Cascade, RouteMatch, RouteRule, RoutingPolicy

ROUTE_HEADER = "x-switchyard-route"

Source = Literal["header", "rule", "default", "model"]


class RouteError(Exception):
    """A request that cannot be routed; carries the OpenAI error fields the gateway sends."""

    status = 503
    type = "service_unavailable"
    code = "no_route"

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class RouteForbidden(RouteError):
    status = 403
    type = "permission_denied"
    code = "route_forbidden"


class UnknownRoute(RouteError):
    status = 400
    type = "invalid_request_error"
    code = "unknown_route"


class UnknownModel(RouteError):
    status = 404
    type = "invalid_request_error"
    code = "model_not_found"


@dataclass(frozen=True, slots=True)
class RouteDecision:
    pools: tuple[str, ...]
    """Try in this order: the chosen pool, then where to escalate if it fails or refuses."""
    source: Source
    reason: str
    rule: str | None = None
    """The matched rule's name, or `rules[i]` for an unnamed one."""
    cascaded: bool = False
    """True when low classifier confidence skipped the pool the rules chose."""

    @property
    def pool(self) -> str:
        return self.pools[0]


def matches(
    when: RouteMatch,
    model: str,
    routed_by_rules: bool,
    task_class: str | None,
    confidence: float | None,
    prompt_tokens: int | None,
) -> bool:
    """Does a rule's condition hold? A condition on a value the request lacks (no classification, no
    token count) does not hold: an unknown is never taken for a match."""
    if when.models is not None:
        if model not in when.models:
            return False
    elif not routed_by_rules:
        return False
    if when.classes is not None and task_class not in when.classes:
        return False
    if when.min_confidence is not None and (confidence is None or confidence < when.min_confidence):
        return False
    if when.max_confidence is not None and (confidence is None or confidence >= when.max_confidence):
        return False
    if when.min_prompt_tokens is not None and (prompt_tokens is None or prompt_tokens < when.min_prompt_tokens):
        return False
    if when.max_prompt_tokens is not None and (prompt_tokens is None or prompt_tokens > when.max_prompt_tokens):
        return False
    return True


def first_match(
    rules: list[RouteRule],
    model: str,
    routed_by_rules: bool,
    task_class: str | None,
    confidence: float | None,
    prompt_tokens: int | None,
) -> tuple[int, RouteRule] | None:
    for i, rule in enumerate(rules):
        if matches(rule.when, model, routed_by_rules, task_class, confidence, prompt_tokens):
            return i, rule
    return None


def escalation(pool: str, rule: RouteRule | None, cascade: Cascade) -> list[str]:
    """Where a request goes after `pool`: the rule's own list, else the ladder rungs above `pool`."""
    if rule is not None and rule.escalate_to is not None:
        return list(rule.escalate_to)
    if pool in cascade.ladder:
        return cascade.ladder[cascade.ladder.index(pool) + 1 :]
    return []


def decide_route(
    policy: RoutingPolicy,
    requested_model: str,
    *,
    model_pools: Mapping[str, str],
    available_pools: Collection[str],
    task_class: str | None = None,
    confidence: float | None = None,
    prompt_tokens: int | None = None,
    header_route: str | None = None,
) -> RouteDecision:
    """Decide the pools for one request.

    model_pools: public model name → pool (`GatewayConfig.models`); the caller has already checked
    that the tenant may use `requested_model`. available_pools: pools that exist and can take traffic
    now (a pool whose members are all ejected may be left out, so the cascade skips it).
    Raises `RouteError` (503), `RouteForbidden` (403), `UnknownRoute` (400) or `UnknownModel` (404).
    """
    if header_route:
        if not policy.allow_header_override:
            raise RouteForbidden(f"this tenant may not choose a route with {ROUTE_HEADER}", param=ROUTE_HEADER)
        if header_route not in available_pools:
            raise UnknownRoute(f"{ROUTE_HEADER}: no available pool named {header_route!r}", param=ROUTE_HEADER)
        return RouteDecision((header_route,), "header", f"{ROUTE_HEADER}: {header_route}")

    is_auto = requested_model == AUTO_MODEL
    if not is_auto and policy.explicit_models == "refuse":
        raise RouteForbidden(f"this tenant's requests must use model {AUTO_MODEL!r}", param="model")
    routed_by_rules = is_auto or policy.explicit_models == "route"

    found = first_match(policy.rules, requested_model, routed_by_rules, task_class, confidence, prompt_tokens)
    rule: RouteRule | None = None
    rule_name: str | None = None
    if found is not None:
        i, rule = found
        rule_name = rule.name or f"rules[{i}]"
        pool, source = rule.pool, "rule"
        reason = f"rule {rule_name}: class={task_class} confidence={_fmt(confidence)} tokens={prompt_tokens}"
    elif is_auto and policy.default_pool is not None:
        pool, source, reason = policy.default_pool, "default", "no rule matched: default_pool"
    elif requested_model in model_pools:
        pool, source = model_pools[requested_model], "model"
        reason = f"model {requested_model!r}" + (": no rule matched" if routed_by_rules else "")
    else:
        raise (RouteError if is_auto else UnknownModel)(
            f"no pool serves model {requested_model!r}", param="model"
        )

    pools = [pool]
    cascaded = False
    # An explicitly honoured model is the client's choice: it is never swapped for another pool.
    if source != "model" or routed_by_rules:
        pools += escalation(pool, rule, policy.cascade)
        threshold = policy.cascade.min_confidence
        if threshold is not None and confidence is not None and confidence < threshold and len(pools) > 1:
            pools, cascaded = pools[1:], True
            reason += f"; confidence {_fmt(confidence)} < {threshold}: escalated past {pool}"
        if not is_auto and requested_model in model_pools:
            pools.append(model_pools[requested_model])  # last resort for a rerouted model: the one asked for

    tried: list[str] = []
    for p in pools:
        if p in available_pools and p not in tried:
            tried.append(p)
    if not tried:
        raise RouteError(f"no available pool for this request (wanted {', '.join(pools)})")
    if tried[0] != pools[0]:
        reason += f"; {pools[0]} unavailable"
    return RouteDecision(tuple(tried), source, reason, rule_name, cascaded)


def _fmt(confidence: float | None) -> str:
    return "-" if confidence is None else f"{confidence:.2f}"


_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m |i am )?sorry,? (?:but )?|unfortunately,? )?(?:as an ai(?: language model)?,? )?"
    r"i(?:'m| am)?\s*(?:can(?:'|no)?t|cannot|won'?t|will not|(?:not able|unable) to)\s+"
    r"(?:help|assist|answer|do|provide|complete|comply|write|solve|fulfil|fulfill|create|generate)\b",
    re.IGNORECASE,
)


def looks_like_refusal(text: str) -> bool:
    """A small model declining the task ("I'm sorry, but I can't help with that"): a reason to escalate
    to the next pool before answering. Looks at the opening only, so answers that merely *mention*
    not being able to do something later on are not refusals."""
    return bool(_REFUSAL.match(text[:200].replace("’", "'")))


def embedded_default(small: str = "small", large: str = "large", *, min_confidence: float = 0.6) -> RoutingPolicy:
    """`auto` for the embedded default: confident `simple` prompts go to the small bundled model,
    everything else — and anything the small model fails or refuses — to the large one."""
    return RoutingPolicy.model_validate(
        {
            "rules": [{"name": "simple-to-small", "when": {"classes": ["simple"]}, "pool": small}],
            "default_pool": large,
            "cascade": {"ladder": [small, large], "min_confidence": min_confidence},
        }
    )
