"""A toolset: tool specs bound to one scope, called by name with JSON arguments.

Every call returns a JSON string (``ensure_ascii=False``) sized for a context window; a failing
call — unknown tool, bad arguments, a domain error — returns ``{"error": "…"}`` in Japanese and
never raises, so an agent loop can go on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from tansaku.errors import TansakuError, public_message
from tansaku.tools.spec import ToolScope, ToolSpec

log = logging.getLogger(__name__)
MAX_RESULT_CHARS = 8_000  # one tool result in the model's context
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
}


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def _check(spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments checked against the schema; raises ValueError with a Japanese message."""
    props = spec.parameters.get("properties", {})
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise ValueError(f"引数 {', '.join(unknown)} はありません。使える引数: {', '.join(props)}")
    missing = [k for k in spec.parameters.get("required", []) if k not in arguments]
    if missing:
        raise ValueError(f"引数 {', '.join(missing)} が必要です")
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        schema = props[key]
        if value is None:
            continue
        want = _TYPES[schema["type"]]
        if schema["type"] == "integer" and isinstance(value, str) and value.strip().isdigit():
            value = int(value)  # small models quote numbers
        if (isinstance(value, bool) and schema["type"] != "boolean") or not isinstance(value, want):
            raise ValueError(f"引数 {key} の型が違います({schema['type']} で指定してください)")
        if "enum" in schema and value not in schema["enum"]:
            raise ValueError(f"引数 {key} は {', '.join(map(str, schema['enum']))} のどれかです")
        out[key] = value
    return out


def _bounded(result: Any) -> str:
    """JSON of ``result``; a list too long for the context loses its last items."""
    text = json.dumps(result, ensure_ascii=False, default=str)
    items = result.get("results") if isinstance(result, dict) else result
    while len(text) > MAX_RESULT_CHARS and isinstance(items, list) and len(items) > 1:
        items.pop()
        text = json.dumps(result, ensure_ascii=False, default=str)
    return text[:MAX_RESULT_CHARS] if len(text) > MAX_RESULT_CHARS else text


ROLE_OF_TOOL = {
    "search_past_cases": "reports",
    "expand_and_search_cases": "reports",
    "search_manual": "manuals",
}
"""Tools that read one role's collection (the others read the scope or the tables)."""


class Toolset:
    """``specs`` bound to ``scope``."""

    def __init__(self, specs: Iterable[ToolSpec], scope: ToolScope) -> None:
        self.scope = scope
        self._specs = {s.name: s for s in specs}

    @property
    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    @property
    def offered(self) -> list[ToolSpec]:
        """The tools a model is shown: those whose collection the scope has (a scope without a
        daily-report collection offers no daily-report search — a model offered it calls it and
        answers with its 「設定されていません」). Every tool stays callable by name."""
        roles = set(self.scope.collections)
        return [s for s in self._specs.values() if ROLE_OF_TOOL.get(s.name, "") in roles | {""}]

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> str:
        """Run tool ``name`` with ``arguments`` (a dict or the model's JSON text)."""
        spec = self._specs.get(name)
        if spec is None:
            return _error(f"ツール「{name}」はありません。使えるツール: {', '.join(self._specs)}")
        try:
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(arguments or {}, Mapping):
                raise ValueError("引数は JSON オブジェクトで指定してください")
            checked = _check(spec, arguments or {})
        except (ValueError, json.JSONDecodeError) as exc:
            return _error(f"引数が正しくありません: {exc}")
        try:
            return _bounded(spec.fn(self.scope, **checked))
        except TansakuError as exc:
            return _error(str(exc))
        except ValueError as exc:  # a bad value the checks let through: its own words help
            log.info("tool %s refused its arguments: %s", name, exc)
            return _error(f"ツール「{name}」の引数が正しくありません: {public_message(str(exc))}")
        except Exception as exc:  # a tool's bug must not end the agent's turn
            log.exception("tool %s failed", name)
            return _error(f"ツール「{name}」の実行に失敗しました: {type(exc).__name__}")
