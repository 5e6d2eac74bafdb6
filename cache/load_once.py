"""A process-wide value built at first use, by whichever thread asks first, at most once.

For optional models (the learned verifiers): if building fails, the failure is logged once and `get`
returns None from then on, so callers simply go without the model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class LoadOnce(Generic[T]):
    def __init__(self, build: Callable[[], T], log: Any, failure_event: str, **failure_fields: Any) -> None:
        self._build = build
        self._log, self._event, self._fields = log, failure_event, failure_fields
        self._value: T | None = None
        self._failed = False
        self._lock = threading.Lock()

    def get(self) -> T | None:
        if self._value is not None or self._failed:
            return self._value
        with self._lock:
            if self._value is None and not self._failed:
                try:
                    self._value = self._build()
                except Exception as exc:  # noqa: BLE001 - an optional model that cannot load is left out
                    self._failed = True
                    self._log.warning(self._event, error=repr(exc), **self._fields)
        return self._value
