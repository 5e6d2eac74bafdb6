"""The models that ship with Switchyard: a small target and its distilled draft.

Both are tiny GPT-2-architecture models trained by `backends/models/train.py` on the Python standard
library's source (code and docstrings). They produce plausible code-like text; they exist so the
whole path (gateway -> local engine -> speculative decoding) is real with nothing to download.
"""

from __future__ import annotations

from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def bundled_models() -> dict[str, Path]:
    """{"target": dir, "draft": dir} of the shipped models."""
    return {"target": MODELS_DIR / "target", "draft": MODELS_DIR / "draft"}
