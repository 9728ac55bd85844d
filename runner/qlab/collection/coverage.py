"""Schema coverage of one tool: how much of what search, plan and execute need the source actually says.

Each check scores 0-1; a tool's coverage is their sum weighted by ``WEIGHTS`` (which add up to 1):

- ``operation_id``: the id is the source's own (an operationId; MCP and Python names are);
- ``summary``: a summary (OpenAPI), title or first description line (MCP), docstring (Python);
- ``description``: a description that says more than the summary;
- ``parameters_described`` / ``parameters_typed``: the share of parameters with a description / with a type
  or shape (1 when there are none);
- ``response_schema``: a success response (2xx, or the MCP/Python result) has a schema; a 204/205/304-only
  or HEAD operation counts as covered;
- ``examples``: the share of required parameters with an example (1 when none is required).

Overall schema coverage is the mean over tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qlab.collection.model import Tool
from qlab.collection.schemas import is_success, is_typed

WEIGHTS: Mapping[str, float] = {
    "operation_id": 0.10,
    "summary": 0.20,
    "description": 0.15,
    "parameters_described": 0.15,
    "parameters_typed": 0.15,
    "response_schema": 0.15,
    "examples": 0.10,
}
_NO_CONTENT = frozenset({"204", "205", "304"})


@dataclass(frozen=True, slots=True)
class ToolCoverage:
    """One tool's checks (each 0-1), its weighted score, and what it lacks, in words."""

    tool: str
    score: float
    checks: Mapping[str, float]
    missing: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "score": round(self.score, 4),
            "checks": {k: round(v, 4) for k, v in self.checks.items()},
            "missing": list(self.missing),
        }


def has_own_id(tool: Tool) -> bool:
    """False for an operation whose id qlab derived (openapi names those ``"GET /path"``)."""
    if tool.kind in ("openapi", "swagger"):
        return tool.name != f"{tool.method} {tool.path}"
    return True


def tool_coverage(tool: Tool) -> ToolCoverage:
    missing: list[str] = []
    checks: dict[str, float] = {}
    checks["operation_id"] = 1.0 if has_own_id(tool) else 0.0
    if not checks["operation_id"]:
        missing.append("operationId")
    checks["summary"] = 1.0 if tool.summary else 0.0
    if not tool.summary:
        missing.append("summary")
    described = bool(tool.description) and tool.description.strip() != tool.summary.strip()
    checks["description"] = 1.0 if described else 0.0
    if not described:
        missing.append("description")
    params = tool.parameters
    undescribed = [p.name for p in params if not p.description]
    untyped = [p.name for p in params if not is_typed(p.schema)]
    checks["parameters_described"] = 1.0 - len(undescribed) / len(params) if params else 1.0
    checks["parameters_typed"] = 1.0 - len(untyped) / len(params) if params else 1.0
    if undescribed:
        missing.append("parameter descriptions: " + ", ".join(undescribed))
    if untyped:
        missing.append("parameter types: " + ", ".join(untyped))
    ok, why = _response_schema(tool)
    checks["response_schema"] = 1.0 if ok else 0.0
    if not ok:
        missing.append(why)
    required = [p.name for p in params if p.required]
    without = [name for name in required if name not in tool.examples]
    checks["examples"] = 1.0 - len(without) / len(required) if required else 1.0
    if without:
        missing.append("examples: " + ", ".join(without))
    score = sum(WEIGHTS[name] * value for name, value in checks.items())
    return ToolCoverage(tool=tool.id, score=round(score, 6), checks=checks, missing=tuple(missing))


def _response_schema(tool: Tool) -> tuple[bool, str]:
    successes = [s for s in sorted(tool.responses) if is_success(s)]
    if not successes:
        if tool.responses.get("default"):
            return True, ""
        return False, "success response" if tool.kind in ("openapi", "swagger") else "output schema"
    if any(tool.responses[s] for s in successes):
        return True, ""
    if tool.method == "HEAD" or all(s in _NO_CONTENT for s in successes):
        return True, ""
    return False, "response schema for " + ", ".join(successes)
