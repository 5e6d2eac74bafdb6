from __future__ import annotations

import pytest

from tests.processes import start_gateway, start_mock_upstream, gateway_config


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
