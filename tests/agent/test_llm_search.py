"""The LLM expander and classifier: the design's prompt and JSON format, bounded answers, and the
rules whenever the model errs, hangs, refuses or answers garbage — first with a scripted chat
model, then end to end through the fake OpenAI server on a real workspace."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import tansaku
from tansaku.agent.llm_search import (
    CLASSIFY_SCHEMA,
    EXPAND_SCHEMA,
    LLMClassifier,
    LLMExpander,
    use_model_for_search,
)
from tansaku.agent.model_guard import parse_json
from tansaku.agent.models.base import ChatResponse, ModelUnavailable
from tansaku.search.classify import Classification, QueryLabel, RuleClassifier
from tansaku.search.expand import ExpandContext, RuleExpander
from tansaku.testing import ScriptedChatModel
from tansaku.text import get_analyzer
from tansaku.text.dates import TOKYO, resolve_dates
from tansaku.text.synonyms import load_synonyms

NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)


def ScriptedModel(reply: Callable[[str, dict[str, Any] | None], Any]) -> ScriptedChatModel:
    """A chat model whose answers come from ``reply(prompt, json_schema)``."""
    return ScriptedChatModel(reply=lambda r: reply(r.prompt, r.json_schema))


def calls(model: ScriptedChatModel) -> list[tuple[str, dict[str, Any] | None]]:
    return [(r.prompt, r.json_schema) for r in model.requests]


def _ctx(query: str, *, label: QueryLabel = QueryLabel.VAGUE, max_queries: int = 5):
    res = resolve_dates(query, NOW)
    return ExpandContext(
        date_range=res.range,
        remainder=res.remainder if res.range else query,
        synonyms=load_synonyms(("restaurant",)),
        analyzer=get_analyzer(),
        classification=Classification(label, 0.9),
        max_queries=max_queries,
    )


def _raise(*_: Any) -> Any:
    raise ModelUnavailable("モデルに接続できません")


def test_the_prompt_of_the_design() -> None:
    model = ScriptedModel(lambda p, s: {"queries": ["2025-12-10のクレーム内容"]})
    expander = LLMExpander(
        model, clock=lambda: NOW, role="飲食店の業務アシスタント", context={"店舗": "新宿店"}
    )
    assert expander.expand("昨日の問題", _ctx("昨日の問題")) == ["2025-12-10のクレーム内容"]
    prompt, schema = calls(model)[0]
    assert prompt.startswith("あなたは飲食店の業務アシスタントです。")
    assert "- 現在日時: 2025-12-11 (木曜日)" in prompt and "- 店舗: 新宿店" in prompt
    assert "- 昨日: 2025-12-10" in prompt
    assert "- 先週: 2025-12-01から2025-12-07" in prompt
    assert "- 先月: 2025-11-01から2025-11-30" in prompt
    assert "- クエリの日付: 2025-12-10" in prompt and "# ユーザークエリ\n昨日の問題" in prompt
    assert schema == EXPAND_SCHEMA and expander.last_source == "model"
    assert expander.name == "llm:scripted:test"


def test_answers_are_bounded_and_cleaned() -> None:
    many = ["先週のトラブル\x07報告", "先週のトラブル報告", "  ", 42, "長" * 500]
    many += [f"クエリ{i}" for i in range(10)]
    expander = LLMExpander(ScriptedModel(lambda p, s: {"queries": many}), clock=lambda: NOW)
    out = expander.expand("先週の問題", _ctx("先週の問題", max_queries=4))
    assert out == ["先週のトラブル 報告", "先週のトラブル報告", "長" * 200, "クエリ0"]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (_raise, "rules(ModelUnavailable)"),
        (lambda p, s: "すみません、分かりません", "rules(MalformedOutput)"),
        (lambda p, s: {"queries": []}, "rules(MalformedOutput)"),
        (lambda p, s: {"answer": "昨日"}, "rules(MalformedOutput)"),
        (lambda p, s: ChatResponse(content="", finish_reason="refusal"), "rules(MalformedOutput)"),
    ],
)
def test_the_rules_answer_when_the_model_does_not(reply, why) -> None:
    expander = LLMExpander(ScriptedModel(reply), clock=lambda: NOW)
    ctx = _ctx("昨日の問題")
    assert expander.expand("昨日の問題", ctx) == RuleExpander().expand("昨日の問題", ctx)
    assert expander.last_source == why


def test_a_hanging_model_times_out_to_the_rules() -> None:
    release = threading.Event()

    def hang(*_: Any) -> Any:
        release.wait(30)
        return {"queries": ["遅すぎる答え"]}

    expander = LLMExpander(ScriptedModel(hang), clock=lambda: NOW, timeout=0.2)
    ctx = _ctx("最近の問題")
    try:
        assert expander.expand("最近の問題", ctx) == RuleExpander().expand("最近の問題", ctx)
        assert expander.last_source == "rules(timeout)"
    finally:
        release.set()


def test_repeated_failures_pause_the_model() -> None:
    model = ScriptedModel(_raise)
    expander = LLMExpander(model, clock=lambda: NOW, failures_before_pause=2, pause_s=3600)
    for _ in range(5):
        expander.expand("昨日の問題", _ctx("昨日の問題"))
    assert len(calls(model)) == 2 and expander.last_source == "rules(paused)"


def test_classifier_labels_and_caches() -> None:
    model = ScriptedModel(
        lambda p, s: {"label": "statistics", "confidence": 0.93, "reason": "傾向を聞いている"}
    )
    classifier = LLMClassifier(model)
    got = classifier.classify("先月のクレームはどんな感じ?")
    assert got == Classification(QueryLabel.STATISTICS, 0.93, ("llm", "傾向を聞いている"))
    assert classifier.classify("先月のクレームはどんな感じ?") == got
    assert len(calls(model)) == 1 and calls(model)[0][1] == CLASSIFY_SCHEMA
    prompt = calls(model)[0][0]
    assert "# ユーザークエリ\n先月のクレームはどんな感じ?" in prompt
    for label in ("clear", "vague", "manual", "statistics", "table", "greeting"):
        assert f"- {label}: " in prompt


@pytest.mark.parametrize(
    "reply",
    [
        {"label": "urgent", "confidence": 0.9, "reason": "?"},
        ["vague"],
        "ラベルは vague です",
    ],
)
def test_classifier_falls_back_on_malformed_output(reply) -> None:
    classifier = LLMClassifier(ScriptedModel(lambda p, s: reply))
    query = "食中毒の予防方法を教えて"
    assert classifier.classify(query) == RuleClassifier().classify(query)
    assert classifier.last_source == "rules(MalformedOutput)"


def test_classifier_clamps_confidence() -> None:
    reply = {"label": "VAGUE", "confidence": 7, "reason": ""}
    got = LLMClassifier(ScriptedModel(lambda p, s: reply)).classify("最近どう?")
    assert got == Classification(QueryLabel.VAGUE, 1.0, ("llm",))


def test_parse_json_accepts_what_models_write() -> None:
    assert parse_json('```json\n{"queries": ["a"]}\n```') == {"queries": ["a"]}
    assert parse_json('["2025-12-10のクレーム内容", "トラブル報告"]')[1] == "トラブル報告"
    assert parse_json('展開結果です: {"queries": ["事故"]} 以上') == {"queries": ["事故"]}
    with pytest.raises(ValueError):
        parse_json("JSON ではありません")


# -- end to end: a real workspace, the OpenAI provider, the fake server ----------------------


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from tansaku.demo.reports import generate, write_reports_jsonl
    from tansaku.testing import HashEmbedder

    home = tmp_path_factory.mktemp("llm-search")
    src = write_reports_jsonl(generate(NOW), home / "reports.jsonl")
    client = tansaku.connect(home / "ws", embedder=HashEmbedder(32))
    config = Path(__file__).resolve().parents[2] / "examples" / "configs" / "reports.toml"
    assert client.ingest([src], collection="reports", config=config).ok
    yield client
    client.close()


def _handler(turn):
    from tansaku.testing import Reply

    schema = turn.json_schema or {}
    if "label" in json.dumps(schema):
        return Reply.say(json.dumps({"label": "vague", "confidence": 0.9, "reason": "曖昧"}))
    payload = {
        "queries": ["2025-12-10のクレーム内容", "2025-12-10のトラブル報告", "2025-12-10の事故"]
    }
    return Reply.say(json.dumps(payload, ensure_ascii=False))


@pytest.mark.integration
def test_searches_use_the_model_through_the_fake_server(reports) -> None:
    pytest.importorskip("openai")
    from tansaku.agent.models.openai_compat import OpenAIChatModel
    from tansaku.testing import FakeOpenAIServer, Reply

    with FakeOpenAIServer(handler=_handler) as srv:
        model = OpenAIChatModel(model="fake-model", base_url=srv.base_url, max_retries=0)
        expander, classifier = use_model_for_search(reports, model, clock=lambda: NOW)
        result = reports.search("昨日の問題", collection="reports", now=NOW)
        assert result.plan.classification.label is QueryLabel.VAGUE
        assert result.plan.stage.expanded_queries == (
            "2025-12-10の問題",
            "2025-12-10のクレーム内容",
            "2025-12-10のトラブル報告",
            "2025-12-10の事故",
        )
        assert result.hits and {h.record.metadata["date"] for h in result.hits} == {"2025-12-10"}
        schemas = [t.json_schema for t in srv.turns]
        assert CLASSIFY_SCHEMA in schemas and EXPAND_SCHEMA in schemas
        # the server goes down: the same kind of search still answers, with the rules
        srv.handler = None
        srv.script(*[Reply.error(500, "internal error")] * 4)
        down = reports.search("一昨日の問題", collection="reports", now=NOW)
        assert down.hits and down.plan.classification.label is QueryLabel.VAGUE
        assert expander is not None and expander.last_source.startswith("rules(")
        assert classifier is not None and classifier.last_source.startswith("rules(")


@pytest.mark.integration
def test_the_classifier_through_the_fake_gemini_server() -> None:
    pytest.importorskip("google.genai")
    from tansaku.agent.models.gemini import GeminiChatModel
    from tansaku.testing import FakeGeminiServer, Reply

    label = {"label": "manual", "confidence": 0.88, "reason": "予防の方法を聞いている"}
    with FakeGeminiServer([Reply.say(json.dumps(label, ensure_ascii=False))]) as srv:
        model = GeminiChatModel(model="gemini-2.5-flash", api_key="k", base_url=srv.url)
        got = LLMClassifier(model).classify("ノロウイルスを防ぐには?")
        assert got == Classification(QueryLabel.MANUAL, 0.88, ("llm", "予防の方法を聞いている"))
        assert srv.turns[0].json_schema is not None
        assert "ノロウイルスを防ぐには?" in srv.turns[0].last.content


def test_the_search_now_is_the_prompt_today() -> None:
    """A search run with ``now`` (``--now``) in the past: the prompt's today, yesterday and
    last week are that day's, not the real clock's."""
    from dataclasses import replace
    from datetime import datetime

    model = ScriptedModel(lambda p, s: {"queries": ["2025-06-09のクレーム内容"]})
    expander = LLMExpander(model, clock=lambda: NOW)  # the "real" clock: 2025-12-11
    past = datetime(2025, 6, 10, 9, 0, tzinfo=NOW.tzinfo)
    expander.expand("昨日の問題", replace(_ctx("昨日の問題"), now=past))
    prompt = calls(model)[0][0]
    assert "- 現在日時: 2025-06-10 (火曜日)" in prompt and "- 昨日: 2025-06-09" in prompt
    assert "2025-12-11" not in prompt
