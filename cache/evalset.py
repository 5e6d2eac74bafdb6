"""Loader for the hand-written evaluation groups in `cache/data/` (format in cache/data/README.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
SPLITS = {"dev": DATA_DIR / "groups_dev.txt", "heldout": DATA_DIR / "groups_heldout.txt"}


@dataclass
class Group:
    split: str
    query: str
    paraphrases: list[str] = field(default_factory=list)
    near_misses: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)


def load_groups(split: str) -> list[Group]:
    groups: list[Group] = []
    path = SPLITS[split]
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("Q:"):
            groups.append(Group(split, line[2:].strip()))
        elif not groups:
            raise ValueError(f"{path}:{number}: entry before the first 'Q:' line")
        elif line.startswith("="):
            groups[-1].paraphrases.append(line[1:].strip())
        elif line.startswith("!"):
            kind, _, text = line[1:].partition(":")
            groups[-1].near_misses.append((kind.strip(), text.strip()))
        else:
            raise ValueError(f"{path}:{number}: expected 'Q:', '=' or '!': {raw!r}")
    return groups
