"""The pages' Japanese words (``static/js/labels.js``) cover every name the engine can send:
each tool of the agent (the same words as ``--show-thoughts``), each axis mode, each query
type. A new tool or mode without a word here would reach a page in English."""

from __future__ import annotations

import re
from pathlib import Path

import tansaku.server.ui
from tansaku.agent.result_text import TOOL_LABELS
from tansaku.config import AxisMode, FusionMethod
from tansaku.search.classify import QueryLabel

LABELS_JS = Path(tansaku.server.ui.__file__).parent / "static" / "js" / "labels.js"


def js_object(name: str) -> dict[str, str]:
    """The ``export const NAME = { key: "value", … }`` of labels.js as a dict."""
    source = LABELS_JS.read_text(encoding="utf-8")
    body = re.search(rf"export const {name} = \{{(.*?)\}};", source, re.S)
    assert body, f"{name} is not in labels.js"
    return dict(re.findall(r'(\w+): "([^"]*)"', body.group(1)))


def test_every_tool_has_the_same_japanese_name_as_the_cli():
    js = js_object("TOOL_LABELS")
    assert {k: js.get(k) for k in TOOL_LABELS} == TOOL_LABELS


def test_every_axis_mode_fusion_and_query_type_has_a_japanese_name():
    assert set(js_object("MODE_LABELS")) == {m.value for m in AxisMode}
    assert set(js_object("FUSION_LABELS")) == {m.value for m in FusionMethod}
    assert {q.value for q in QueryLabel} <= set(js_object("QUERY_TYPE_LABELS"))
    for words in map(js_object, ("MODE_LABELS", "FUSION_LABELS", "QUERY_TYPE_LABELS")):
        assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", w) for w in words.values())
