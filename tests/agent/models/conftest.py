"""Tool specs with real Japanese descriptions, shared by the provider tests."""

from __future__ import annotations

from typing import Any

import pytest

from tansaku.tools.spec import ToolSpec


def _noop(scope: Any, **kwargs: Any) -> str:
    return "{}"


SEARCH = ToolSpec(
    name="search_past_cases",
    description="日報と掲示板から過去の事例を検索します。例: 「冷蔵庫の故障」「レジの違算」",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "検索する内容"}},
        "required": ["query"],
        "additionalProperties": False,
    },
    fn=_noop,
)
CLOCK = ToolSpec(
    name="get_current_time",
    description="現在の日時(Asia/Tokyo)を返します。「今日」「昨日」を解決するときに使います。",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
    fn=_noop,
)

ROUTE_SCHEMA = {
    "title": "route",
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": ["clear", "vague", "manual", "statistics"]},
        "reason": {"type": "string"},
    },
    "required": ["category", "reason"],
}


@pytest.fixture
def specs() -> list[ToolSpec]:
    return [SEARCH, CLOCK]
