from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from policies.schema import Budgets, Limits

SECTION = """
limits:
  requests_per_minute: 600
  tokens_per_minute: 200000
  per_key: {requests_per_minute: 100, tokens_per_minute: 50000}
  reserve_output_tokens: 512
budgets:
  max_input_tokens: 8000
  max_output_tokens: 1024
  max_total_tokens: 8192
  on_input_over: compress
  compression:
    steps: [normalize, dedupe, fewshot, extractive, truncate]
    near_duplicate: 0.9
    fewshot_keep: 2
    extractive_scorer: lexical
    compress_system: false
"""


def test_the_documented_yaml_validates():
    data = yaml.safe_load(SECTION)
    limits, budgets = Limits(**data["limits"]), Budgets(**data["budgets"])
    assert limits.per_key.tokens_per_minute == 50000 and limits.reserve_output_tokens == 512
    assert budgets.compression.steps[-1] == "truncate" and budgets.on_input_over == "compress"


@pytest.mark.parametrize("bad", [
    {"on_input_over": "shrink"},
    {"compression": {"steps": ["extractive", "extractive"]}},
    {"compression": {"steps": ["truncate", "normalize"]}},
    {"compression": {"steps": ["summarise"]}},
    {"compression": {"near_duplicate": 0}},
    {"max_input_tokens": 0},
    {"max_total_tokens": 1},
    {"compresion": {}},  # typo: unknown keys are errors
])
def test_bad_budgets_are_refused(bad):
    with pytest.raises(ValidationError):
        Budgets(**bad)


def test_limits_refuse_unknown_keys_and_nonsense():
    with pytest.raises(ValidationError):
        Limits(per_key={"rpm": 3})
    with pytest.raises(ValidationError):
        Limits(tokens_per_minute=0)
