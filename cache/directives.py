"""What a client may ask of the cache for one request: the `x-switchyard-cache-control` request header.

Its grammar is HTTP's `Cache-Control` (RFC 9111 §5.2.1), comma-separated directives, case-insensitive:

- `no-cache`        — do not answer from the cache (a "regenerate" button); the fresh answer replaces
                      the entry of the same request. `max-age=0` means the same.
- `no-store`        — do not store this request's answer (a prompt the client will not have kept); it
                      may still be answered from the cache.
- `max-age=N`       — serve only an entry made at most N seconds ago; an older one is not served, and
                      the fresh answer replaces the same request's entry.
- `only-if-cached`  — answer from the cache or not at all: a miss is a 504 and never reaches a backend.

Unknown directives are ignored, as HTTP caches do. A `max-age` that is not a whole number of seconds is
an error: a client that asks for freshness must not be served something it did not ask for.

Why not the standard `Cache-Control` header itself: HTTP tools and proxies add `Cache-Control: no-cache`
to requests on their own (Postman does by default, browsers on reload), which would silently turn the
cache off for everyone behind them. The tenant's policy decides what is cacheable at all; these
directives only narrow it for one request."""

from __future__ import annotations

from dataclasses import dataclass

HEADER = "x-switchyard-cache-control"
MAX_AGE_LIMIT = 10 ** 9  # seconds (~31 years): anything longer means "any age"


@dataclass(frozen=True, slots=True)
class CacheDirectives:
    no_store: bool = False
    max_age: int | None = None  # seconds; 0 = no-cache
    only_if_cached: bool = False

    @property
    def no_cache(self) -> bool:
        return self.max_age == 0


NONE = CacheDirectives()


def parse(value: str | None) -> CacheDirectives:
    """The directives of one header value (None or empty: none). Raises ValueError for a bad max-age."""
    if not value:
        return NONE
    no_store = only_if_cached = False
    max_age: int | None = None
    for part in value.split(","):
        name, _, argument = part.strip().partition("=")
        name = name.strip().lower()
        if name == "no-cache":
            max_age = 0
        elif name == "no-store":
            no_store = True
        elif name == "only-if-cached":
            only_if_cached = True
        elif name == "max-age":
            seconds = _seconds(argument.strip().strip('"'))
            max_age = seconds if max_age is None else min(max_age, seconds)
    return CacheDirectives(no_store=no_store, max_age=max_age, only_if_cached=only_if_cached)


def _seconds(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"max-age must be a whole number of seconds, got {text[:40]!r}")
    digits = text.lstrip("0") or "0"  # "00000000000" is 0
    # Past the limit only the digit count matters (and int() of a huge digit string is refused).
    return MAX_AGE_LIMIT if len(digits) > 10 else min(int(digits), MAX_AGE_LIMIT)
