"""Drop the oldest turns of a chat until it fits, never a system prompt or the last user turn.

A turn is a user message with everything up to the next user message (the assistant's answer, tool calls
and their results), so dropping one keeps roles alternating and never orphans a tool result. Everything
from the last user message on is the current turn and stays, and so do system/developer messages
wherever they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Message = dict[str, Any]
_PINNED_ROLES = ("system", "developer")


def last_user_index(messages: Sequence[Message]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def droppable_turns(messages: Sequence[Message]) -> list[list[int]]:
    """Indices of the turns that may be dropped, oldest first."""
    last = last_user_index(messages)
    end = last if last is not None else len(messages)
    turns: list[list[int]] = []
    for i in range(end):
        if messages[i].get("role") in _PINNED_ROLES:
            continue
        if messages[i].get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(i)
    return turns


def truncate_messages(
    messages: Sequence[Message], target: int, count: Callable[[Sequence[Message]], int]
) -> tuple[list[Message], int, int]:
    """(messages, turns dropped, tokens) with the fewest oldest turns dropped so `count(...) <= target`;
    every droppable turn dropped (and still over) when even that does not fit."""
    turns = droppable_turns(messages)

    def without(k: int) -> list[Message]:
        gone = {i for t in turns[:k] for i in t}
        return [m for i, m in enumerate(messages) if i not in gone]

    tokens = count(messages)
    if tokens <= target or not turns:
        return list(messages), 0, tokens
    k = fewest_to_drop(len(turns), lambda k: count(without(k)) <= target)
    kept = without(k)
    return kept, k, count(kept)


def fewest_to_drop(n: int, fits: Callable[[int], bool]) -> int:
    """The least k in 1..n with fits(k), by binary search (fits is monotone: dropping more never makes a
    prompt longer); n when none fits. Each probe is an exact count, so the answer is exact for any
    counter, chat templates included, where per-item counts do not add up."""
    lo, hi = 1, n
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi
