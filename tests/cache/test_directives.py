"""The client's x-switchyard-cache-control header (cache/directives.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cache import directives
from cache.directives import CacheDirectives


@pytest.mark.parametrize("value, expected", [
    (None, CacheDirectives()),
    ("", CacheDirectives()),
    ("no-cache", CacheDirectives(max_age=0)),
    ("max-age=0", CacheDirectives(max_age=0)),
    ("No-Store", CacheDirectives(no_store=True)),
    ("max-age=300, no-store", CacheDirectives(no_store=True, max_age=300)),
    ('max-age="60"', CacheDirectives(max_age=60)),
    ("max-age=300, no-cache", CacheDirectives(max_age=0)),  # the stricter wins, in either order
    ("no-cache,max-age=300", CacheDirectives(max_age=0)),
    ("max-age=600, max-age=60", CacheDirectives(max_age=60)),
    ("only-if-cached, max-age=10", CacheDirectives(max_age=10, only_if_cached=True)),
    ("private, must-revalidate, stale-if-error=5", CacheDirectives()),  # unknown directives are ignored
    ("max-age=" + "9" * 5000, CacheDirectives(max_age=directives.MAX_AGE_LIMIT)),
    ("max-age=00000000000", CacheDirectives(max_age=0)),  # leading zeros are no "any age"
    ("max-age=00000000002", CacheDirectives(max_age=2)),
])
def test_parse(value, expected):
    parsed = directives.parse(value)
    assert parsed == expected
    assert parsed.no_cache == (expected.max_age == 0)


@pytest.mark.parametrize("value", ["max-age=soon", "max-age=-1", "max-age=", "max-age=1.5", "max-age=１２",
                                   "no-store, max-age=12s"])
def test_a_bad_max_age_is_refused(value):
    with pytest.raises(ValueError, match="max-age must be a whole number of seconds"):
        directives.parse(value)


@given(st.text(max_size=200))
def test_any_header_value_parses_or_is_refused_with_a_value_error(value):
    try:
        parsed = directives.parse(value)
    except ValueError:
        return
    assert parsed.max_age is None or 0 <= parsed.max_age <= directives.MAX_AGE_LIMIT
