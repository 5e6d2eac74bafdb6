"""The embedded default: what `switchyard serve` runs with no config file.

One tenant whose key is `$SWITCHYARD_API_KEY` (generated and printed when unset), admin endpoints keyed
by `$SWITCHYARD_ADMIN_KEY` (likewise), and the bundled models on the in-process local engine behind the
public names `small` (the draft model alone), `large` (the target, decoding speculatively with the
draft) and `auto` (Switchyard chooses).
"""

from __future__ import annotations

import os
import secrets

from gateway.runtime import hash_key
from policies.routing import embedded_default
from policies.schema import GatewayConfig


def _key(env: str, prefix: str) -> tuple[str, bool]:
    value = os.environ.get(env)
    if value:
        return value, False
    return prefix + secrets.token_urlsafe(24), True


def embedded_config() -> tuple[GatewayConfig, dict[str, str]]:
    """The config, and the keys that were generated (to print once at start)."""
    api_key, api_generated = _key("SWITCHYARD_API_KEY", "sy-")
    admin_key, admin_generated = _key("SWITCHYARD_ADMIN_KEY", "sy-admin-")
    config = GatewayConfig.model_validate({
        "server": {"admin_keys": [{"sha256": hash_key(admin_key), "name": "admin"}]},
        "pools": {
            "small": {"members": [{"kind": "local", "model": "bundled:draft"}], "max_attempts": 1},
            "large": {"members": [{"kind": "local", "model": "bundled:target", "draft": "bundled:draft"}],
                      "max_attempts": 1},
        },
        "models": {
            "small": {"pool": "small", "description": "bundled draft model alone"},
            "large": {"pool": "large", "description": "bundled target model, speculative decoding"},
            "auto": {"pool": "large", "description": "Switchyard chooses"},
        },
        "tenants": {
            "default": {
                "keys": [{"sha256": hash_key(api_key), "name": "default"}],
                "models": ["*"],
                "budgets": {"max_output_tokens": 512},
                # `auto`: confident `simple` prompts to the small model, the rest (and anything the
                # small model fails or refuses) to the large one.
                "routing": embedded_default("small", "large").model_dump(),
            }
        },
    })
    generated = {}
    if api_generated:
        generated["SWITCHYARD_API_KEY"] = api_key
    if admin_generated:
        generated["SWITCHYARD_ADMIN_KEY"] = admin_key
    return config, generated
