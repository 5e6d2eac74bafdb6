"""Training text that exists on any machine with Python: the standard library's own source.

Two kinds of documents come out of it: whole source files (for plain completion) and chat pairs
built from functions with docstrings (user = the docstring's first paragraph, assistant = the
function), so the shipped models learn the chat template they are served with.

The held-out split is a stable hash of each file's path relative to the stdlib root, so every
machine with the same Python holds out the same files; `bench/speculative.py` draws its prompts
from the held-out files, which neither the tokenizer nor the models ever saw.
"""

from __future__ import annotations

import ast
import sysconfig
import textwrap
import zlib
from dataclasses import dataclass
from pathlib import Path

# Folders left out: test suites are huge and repetitive; idlelib/turtledemo are GUI demos.
_SKIP_PARTS = {"test", "tests", "idlelib", "turtledemo", "site-packages", "lib2to3", "__pycache__"}
HELDOUT_EVERY = 20  # one file in 20 is held out


@dataclass(frozen=True, slots=True)
class SourceFile:
    relpath: str
    text: str

    @property
    def heldout(self) -> bool:
        return zlib.crc32(self.relpath.encode()) % HELDOUT_EVERY == 0


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def stdlib_files(root: Path | None = None) -> list[SourceFile]:
    """Every readable stdlib .py file, sorted by path so the order is the same everywhere."""
    root = root or stdlib_root()
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _SKIP_PARTS.intersection(rel.parts):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if text.strip():
            out.append(SourceFile(rel.as_posix(), text))
    return out


def split(files: list[SourceFile]) -> tuple[list[SourceFile], list[SourceFile]]:
    train = [f for f in files if not f.heldout]
    held = [f for f in files if f.heldout]
    return train, held


def chat_pairs(source: str, max_lines: int = 60) -> list[tuple[str, str]]:
    """(instruction, code) pairs: each documented function's docstring summary and its source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    pairs = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node)
        if not doc or node.end_lineno is None or node.end_lineno - node.lineno > max_lines:
            continue
        summary = doc.strip().split("\n\n")[0].strip()
        if len(summary) < 12:
            continue
        code = ast.get_source_segment(source, node)
        if not code:
            continue
        # get_source_segment drops the first line's indentation only: put it back, then dedent all.
        code = textwrap.dedent(" " * node.col_offset + code)
        pairs.append((summary, code))
    return pairs
