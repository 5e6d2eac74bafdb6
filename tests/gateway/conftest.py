from __future__ import annotations

import pytest

from tests.processes import start_gateway, start_mock_upstream, gateway_config


async def in_process_app():
    """The gateway's aiohttp app built in this process (not started), with its in-memory cache, for
    lifecycle and middleware tests. The cache is off for every tenant, so no model loads."""
    from cache.service import CacheService
    from gateway.app import create_app
    from gateway.runtime import RuntimeManager
    from policies.ratelimit import RateLimiter
    from policies.schema import GatewayConfig

    off = {"cache": {"enabled": False}}
    config = GatewayConfig.model_validate(gateway_config({"small": ["http://127.0.0.1:9"]}, acme=off, globex=off))
    cache = await CacheService.create(None, load_encoder=False)
    return create_app(RuntimeManager(config, "test"), await RateLimiter.create(None), cache), cache


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("gw")


@pytest.fixture(scope="module")
def upstream(workdir):
    proc = start_mock_upstream(workdir, model="mock-served-name")
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def gateway(workdir, upstream):
    """One gateway in front of one mock upstream: public model `small`; acme may use all, globex `small`."""
    config = gateway_config({"small": [upstream.url], "other": [upstream.url]},
                            acme={"budgets": {"max_output_tokens": 64}})
    proc = start_gateway(workdir, config)
    yield proc
    proc.stop()
