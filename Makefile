# Switchyard developer commands. `make test` is the README's test command and what CI runs.
PYTHON ?= python

.PHONY: setup test serve bench check-policy

setup:  ## install the project (CPU torch) and redis-server for the tests
	command -v redis-server >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq redis-server)
	$(PYTHON) -m pip install torch==2.13.0 -e '.[dev]'

test:  ## the whole test suite (starts its own redis-server on a free port)
	$(PYTHON) -m pytest -q

serve:  ## the embedded default on http://127.0.0.1:8080/v1
	switchyard serve

check-policy:
	switchyard policy check policies/examples/*.yaml

bench:  ## benchmarks that print tables (and write PNGs under bench/out/)
	command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk)
	$(PYTHON) bench/proxy_overhead.py
	for b in speculative cache_quality cache_latency routing compression; do \
	  if [ -f bench/$$b.py ]; then $(PYTHON) bench/$$b.py || exit 1; fi; done
