"""Load a gateway config YAML into a validated `GatewayConfig`, naming file, line and field of every error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from policies.schema import GatewayConfig

Path_ = tuple[str | int, ...]


class PolicyError(Exception):
    """Every problem found in one file, each as `file:line: field: message`."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _line_index(node: yaml.Node, path: Path_, out: dict[Path_, int]) -> None:
    """Map each path in the document to the 1-based line where its value starts."""
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            out[path + (key,)] = key_node.start_mark.line + 1
            _line_index(value_node, path + (key,), out)
            out[path + (key,)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_index(item, path + (i,), out)


def _line_for(lines: dict[Path_, int], loc: Path_) -> int:
    # The deepest prefix of the error's location that exists in the file (a missing field has no line
    # of its own: report its parent's).
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return 1


def _field(loc: Path_) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(top level)"


def parse(text: str, source: str = "<string>") -> GatewayConfig:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise PolicyError([f"{source}:{line}: YAML syntax error: {getattr(exc, 'problem', exc)}"]) from None
    if node is None or not isinstance(data, dict):
        raise PolicyError([f"{source}:1: the file must be a YAML mapping with pools, models and tenants"])
    lines: dict[Path_, int] = {}
    _line_index(node, (), lines)
    try:
        config = GatewayConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            # Drop pydantic's discriminated-union tags ('openai', 'local') from the location.
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p in ("openai", "local")
                                                      and len(err["loc"]) > 3))
            problems.append(f"{source}:{_line_for(lines, loc)}: {_field(loc)}: {err['msg']}")
        raise PolicyError(problems) from None
    refs = config.reference_errors()
    if refs:
        raise PolicyError([f"{source}:{_line_for(lines, loc)}: {_field(loc)}: {msg}" for loc, msg in refs])
    return config


def load(path: str | Path) -> GatewayConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError([f"{path}: cannot read: {exc.strerror}"]) from None
    return parse(text, str(path))
