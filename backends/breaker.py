"""A circuit breaker per pool member, which is also its passive outlier-ejection state.

    closed ──(N consecutive failures, or error rate ≥ R over the window)──► open
    open ──(cool-down elapsed)──► half-open ──(probe succeeds)──► closed
                                      └──────(probe fails)──► open, with a longer cool-down

While open the member is ejected: the chooser skips it. Each consecutive ejection doubles the
cool-down (up to a cap), so a member that keeps failing its probes is tried less and less often;
a member that stays closed for a full cap's length starts again from the base cool-down.
Active health checks (`backends.health`) feed `record_health`: repeated failed checks eject the
member, and a member ejected by health checks comes back to half-open on its first passing check.

Pure and synchronous, with an injectable clock, so every transition is unit-testable. Not
thread-safe: it lives on the gateway's event loop.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable
from dataclasses import dataclass


class State(str, enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    consecutive_failures: int = 5
    """Failures in a row that open the breaker."""
    error_rate: float = 0.5
    """Failure share over the window that opens it, once the window holds `min_requests`."""
    min_requests: int = 20
    window_seconds: float = 30.0
    window_buckets: int = 10
    cooldown_seconds: float = 5.0
    """Ejection time after the first opening; doubles with each consecutive one."""
    max_cooldown_seconds: float = 300.0
    half_open_probes: int = 1
    """Requests let through at once while half-open."""
    probe_successes: int = 1
    """Successful probes that close the breaker again."""
    health_failures: int = 2
    """Consecutive failed active health checks that open the breaker."""

    def __post_init__(self) -> None:
        if self.consecutive_failures < 1 or self.min_requests < 1 or self.window_buckets < 1:
            raise ValueError("consecutive_failures, min_requests and window_buckets must be ≥ 1")
        if not 0.0 < self.error_rate <= 1.0:
            raise ValueError("error_rate must be in (0, 1]")
        if self.window_seconds <= 0 or self.cooldown_seconds <= 0 or self.max_cooldown_seconds < self.cooldown_seconds:
            raise ValueError("window and cool-downs must be positive, max_cooldown ≥ cooldown")
        if self.half_open_probes < 1 or self.probe_successes < 1 or self.health_failures < 1:
            raise ValueError("half_open_probes, probe_successes and health_failures must be ≥ 1")


def is_member_failure(status: int | None) -> bool:
    """Does an outcome count against the member? None = no response at all (connect error, timeout).
    5xx, 408 and 429 say the member is broken or overloaded; other 4xx are the client's doing."""
    return status is None or status >= 500 or status in (408, 429)


class _Window:
    """Request and failure counts over the last `seconds`, in fixed buckets: O(1) memory and time."""

    def __init__(self, seconds: float, buckets: int) -> None:
        self.width = seconds / buckets
        self.ids = [-1] * buckets
        self.total = [0] * buckets
        self.failed = [0] * buckets

    def add(self, now: float, failed: bool) -> None:
        idx = math.floor(now / self.width)
        slot = idx % len(self.ids)
        if self.ids[slot] != idx:
            self.ids[slot], self.total[slot], self.failed[slot] = idx, 0, 0
        self.total[slot] += 1
        self.failed[slot] += failed

    def counts(self, now: float) -> tuple[int, int]:
        oldest = math.floor(now / self.width) - len(self.ids) + 1
        live = [i for i, b in enumerate(self.ids) if b >= oldest]
        return sum(self.total[i] for i in live), sum(self.failed[i] for i in live)

    def clear(self) -> None:
        self.ids = [-1] * len(self.ids)


class CircuitBreaker:
    def __init__(
        self,
        config: BreakerConfig | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[State, State, str], None] | None = None,
    ) -> None:
        self.config = config or BreakerConfig()
        self._clock = clock
        self._on_change = on_change
        self._state = State.CLOSED
        self._window = _Window(self.config.window_seconds, self.config.window_buckets)
        self._streak = 0  # consecutive failures while closed
        self._health_streak = 0
        self._probes_in_flight = 0
        self._probe_successes = 0
        self._open_until = 0.0
        self._cooldown = 0.0  # the current opening's cool-down
        self._closed_since = clock()
        self.ejections = 0
        """Consecutive openings; sets the cool-down."""
        self.opened_by: str | None = None
        """'traffic' or 'health' while open or half-open."""

    # --- reading ------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        if self._state is State.OPEN and self._clock() >= self._open_until:
            self._to(State.HALF_OPEN, "cool-down elapsed")
        return self._state

    def available(self) -> bool:
        """Could a request go to this member now? Does not reserve anything."""
        state = self.state
        if state is State.CLOSED:
            return True
        return state is State.HALF_OPEN and self._probes_in_flight < self.config.half_open_probes

    def acquire(self) -> bool:
        """Reserve the right to send one request; while half-open this takes a probe slot. Every True
        must be followed by exactly one `record_success`, `record_failure` or `release`."""
        if not self.available():
            return False
        if self._state is State.HALF_OPEN:
            self._probes_in_flight += 1
        return True

    def retry_in(self) -> float:
        """Seconds until an open breaker lets a probe through (0 when it would now)."""
        if self.state is not State.OPEN:
            return 0.0
        # clamped: (now + 40) - now can come out as 40.000000000000114
        return min(self._cooldown, max(0.0, self._open_until - self._clock()))

    def snapshot(self) -> dict[str, object]:
        total, failed = self._window.counts(self._clock())
        return {
            "state": self.state.value,
            "ejections": self.ejections,
            "opened_by": self.opened_by,
            "retry_in": round(self.retry_in(), 3),
            "window_requests": total,
            "window_failures": failed,
            "consecutive_failures": self._streak,
        }

    # --- outcomes -----------------------------------------------------------------------------

    def record_success(self) -> None:
        state = self.state
        if state is State.CLOSED:
            self._streak = 0
            self._window.add(self._clock(), False)
        elif state is State.HALF_OPEN and self._probes_in_flight:
            self._probes_in_flight -= 1
            self._probe_successes += 1
            if self._probe_successes >= self.config.probe_successes:
                self._close("probe succeeded")
        # While open, a late success from before the ejection changes nothing.

    def record_failure(self) -> None:
        state = self.state
        now = self._clock()
        if state is State.CLOSED:
            self._streak += 1
            self._window.add(now, True)
            total, failed = self._window.counts(now)
            if self._streak >= self.config.consecutive_failures:
                self._open("traffic", f"{self._streak} consecutive failures")
            elif total >= self.config.min_requests and failed >= self.config.error_rate * total:
                self._open("traffic", f"error rate {failed}/{total}")
        elif state is State.HALF_OPEN and self._probes_in_flight:
            self._probes_in_flight -= 1
            self._open(self.opened_by or "traffic", "probe failed")

    def release(self) -> None:
        """The request ended with no verdict on the member (e.g. the client went away)."""
        if self._state is State.HALF_OPEN and self._probes_in_flight:
            self._probes_in_flight -= 1

    def record_health(self, ok: bool) -> None:
        """Result of one active health check."""
        state = self.state
        if ok:
            self._health_streak = 0
            if state is State.OPEN and self.opened_by == "health":
                self._to(State.HALF_OPEN, "health check passed")
            return
        self._health_streak += 1
        if self._health_streak >= self.config.health_failures and state is not State.OPEN:
            self._open("health", f"{self._health_streak} failed health checks")

    # --- transitions --------------------------------------------------------------------------

    def _open(self, by: str, why: str) -> None:
        now = self._clock()
        if self._state is State.CLOSED and now - self._closed_since >= self.config.max_cooldown_seconds:
            self.ejections = 0  # healthy for a long while: forgive earlier ejections
        self.ejections += 1
        cooldown = min(self.config.cooldown_seconds * 2 ** (self.ejections - 1), self.config.max_cooldown_seconds)
        self._open_until = now + cooldown
        self._cooldown = cooldown
        self.opened_by = by
        self._to(State.OPEN, f"{why}; ejected for {cooldown:g}s")

    def _close(self, why: str) -> None:
        self._streak = 0
        self._window.clear()
        self._closed_since = self._clock()
        self.opened_by = None
        self._to(State.CLOSED, why)

    def _to(self, state: State, why: str) -> None:
        old, self._state = self._state, state
        if state is State.HALF_OPEN:
            self._open_until = min(self._open_until, self._clock())
        if state is not State.CLOSED:
            self._probes_in_flight = 0
            self._probe_successes = 0
        if old is not state and self._on_change is not None:
            self._on_change(old, state, why)
