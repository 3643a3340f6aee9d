"""Answers with no LLM: routing, extractive answers that cite only what a tool returned,
statistics in a template, honest refusals written to the unanswered log, and ``tansaku ask``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.agent import answer_offline, ask, unanswered_log
from tansaku.tools import toolset

from .clock import NOW


def _tools_called(answer) -> list[str | None]:
    return [e.tool for e in answer.events if e.type == "tool_call"]


def test_vague_question_is_expanded_and_cites_yesterdays_reports(ts) -> None:
    """「昨日の問題」: the reports' own config expands a vague question and keeps to the day;
    the manuals in the scope cannot keep to a day, so they do not answer it."""
    answer = ask(ts, "昨日の問題を教えて", now=NOW)
    assert not answer.unanswered and answer.citations
    assert _tools_called(answer) == ["search_collections"]
    assert {c.date for c in answer.citations} == {"2025-12-10"}
    assert {c.collection for c in answer.citations} == {"reports"}


def test_manual_question_quotes_the_manual(ts) -> None:
    answer = ask(ts, "食中毒の予防方法を教えて", now=NOW)
    assert _tools_called(answer) == ["search_collections"]
    assert "食中毒" in answer.text and answer.citations[0].doc_id == "hygiene"
    assert answer.citations[0].collection == "manuals"


def test_statistics_in_a_template(ts, tables) -> None:
    from tansaku.tables import StoreScope, get_claim_statistics

    answer = ask(ts, "先月のクレーム傾向を教えて", now=NOW, tables=tables)
    expected = get_claim_statistics(
        tables, "2025-11-01", "2025-11-30", scope=StoreScope.all_stores()
    )
    assert f"クレーム {expected.claim_count}件" in answer.text
    assert "2025-11-01〜2025-11-30" in answer.text and not answer.unanswered


def test_unanswerable_is_said_plainly_and_logged_for_the_team(ts) -> None:
    answer = ask(ts, "来年の売上予測は?", now=NOW, team="default")
    assert answer.unanswered and "見つかりませんでした" in answer.text and not answer.citations
    logged = unanswered_log(ts).list(team="default")
    assert logged[0].question == "来年の売上予測は?" and "予測" in logged[0].reason
    assert unanswered_log(ts).list(team="other") == []


def test_nothing_supporting_is_unanswered(ts) -> None:
    tools = toolset(ts, now=NOW)
    answer = answer_offline("量子コンピュータの誤り訂正符号", tools)
    assert answer.unanswered and answer.citations == ()


def test_greeting(ts) -> None:
    answer = ask(ts, "こんにちは", now=NOW)
    assert "質問してください" in answer.text and not answer.unanswered


@pytest.mark.integration
def test_cli_ask_json_and_unanswered(tmp_path, monkeypatch) -> None:
    """Through the CLI, with the real default embedder on a few reports."""
    from tansaku.cli.main import app

    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "ws"))
    texts = {
        "r1": "朝の仕込み時に冷蔵庫の故障が発覚し、一部の食材を廃棄しました。",
        "r2": "お客様から料理の温度が低いとのクレームがありました。すぐに作り直しました。",
        "r3": "レジの現金が千円合わなかったため、店長が再確認しました。",
    }
    meta = {"date": "2025-12-10", "store": "渋谷店", "source_type": "daily_report"}
    records = [
        tansaku.Record(id=f"{k}:body", doc_id=k, field="body", text=v, metadata=meta)
        for k, v in texts.items()
    ]
    with tansaku.connect() as client:
        client.ingest_records(records, collection="reports")
    runner = CliRunner()
    result = runner.invoke(app, ["ask", "冷蔵庫の故障", "--now", "2025-12-11", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"answer", "citations", "events", "conversation_id", "unanswered", "model"}
    assert data["model"] == "offline" and data["citations"][0]["doc_id"] == "r1"
    assert {e["type"] for e in data["events"]} >= {"thought", "tool_call", "tool_result", "answer"}
    human = runner.invoke(app, ["ask", "冷蔵庫の故障", "--now", "2025-12-11", "--show-thoughts"])
    assert human.exit_code == 0 and "[1] " in human.stdout and "(r1)" in human.stdout
    runner.invoke(app, ["ask", "来月の売上の見込みは?"])
    listed = json.loads(runner.invoke(app, ["unanswered", "--json"]).stdout)["unanswered"]
    assert any(u["question"] == "来月の売上の見込みは?" for u in listed)


def test_a_named_day_filters_and_is_not_a_word_to_find(ts) -> None:
    """「2025年12月10日のクレーム内容」: the date narrows the search; the answer's sentences need
    not repeat it (they never do: the date is the report's, not its text's)."""
    answer = ask(ts, "2025年12月10日のクレーム内容を教えて", now=NOW)
    assert not answer.unanswered and answer.citations
    assert {c.date for c in answer.citations} == {"2025-12-10"}


def test_how_often_a_measure_is_a_statistic(ts, tables) -> None:
    answer = ask(ts, "レジの現金が合わないことはどれくらいある?", now=NOW, tables=tables)
    assert [e.tool for e in answer.events if e.type == "tool_call"] == [
        "get_cash_difference_analysis",
        "compare_periods",
    ]
    assert "過不足のあった日" in answer.text and "件" in answer.text and not answer.unanswered
    assert "直前の同じ長さの期間" in answer.text


def test_a_claim_trend_has_a_breakdown_a_change_and_cited_examples(ts, tables) -> None:
    from tansaku.tables import StoreScope, get_claim_breakdown

    answer = ask(ts, "先月のクレーム傾向を教えて", now=NOW, tables=tables)
    got = get_claim_breakdown(tables, "2025-11-01", "2025-11-30", scope=StoreScope.all_stores())
    assert f"クレーム {got.claim_count}件" in answer.text and "・店舗別: " in answer.text
    assert "・週別: " in answer.text and f"{got.previous_count}件から" in answer.text
    assert [c.doc_id for c in answer.citations] == [e["report_id"] for e in got.examples]
    assert all(c.collection == "daily_reports" and c.date for c in answer.citations)


def test_two_named_periods_are_compared_and_the_best_store_is_named(ts, tables) -> None:
    from tansaku.tables import StoreScope, compare_periods, get_sales_trend

    answer = ask(ts, "先月と先々月、クレームはどっちが多かった？", now=NOW, tables=tables)
    got = compare_periods(
        tables,
        "claim_count",
        "2025-11-01",
        "2025-11-30",
        "2025-10-01",
        "2025-10-31",
        scope=StoreScope.all_stores(),
    )
    assert [e.tool for e in answer.events if e.type == "tool_call"] == ["compare_periods"]
    assert f"先月(2025-11-01〜2025-11-30) {got.current.value}件" in answer.text
    assert f"先々月(2025-10-01〜2025-10-31) {got.previous.value}件" in answer.text
    best = ask(ts, "先週、売上が一番良かったのはどの店舗ですか", now=NOW, tables=tables)
    trend = get_sales_trend(tables, "2025-12-01", "2025-12-07", scope=StoreScope.all_stores())
    top = trend.by_store[0]
    assert f"最も多いのは{top.store}({top.sales:,}円)" in best.text
    assert "店舗別: " in best.text


def test_an_event_with_nothing_ahead_lists_the_past_ones_said_to_be_past(ts, tables) -> None:
    answer = ask(ts, "トラットリア・ポルトフィーノでやるイベント", now=NOW, tables=tables)
    assert answer.text.startswith("2025-12-11以降の予定はありません。過去の開催:")
    assert [c.doc_id for c in answer.citations] == ["EVT-007"]


def test_a_case_that_mentions_the_future_is_no_forecast_request() -> None:
    """「来月の売上予測を出して」 asks for a forecast; a tax inquiry whose case says 「…取得できる
    見込みですが、…延長できますか」 asks about the case, and is answered from the records."""
    from tansaku.agent.offline import asks_forecast

    assert asks_forecast("来月の売上予測を出して") and asks_forecast("来年の売上予測は?")
    inquiry = (
        "A社は土地を譲渡しました。収用等のあった日以後2年以内には取得できる見込みですが、"
        "取得期間を延長することができますか。"
    )
    assert not asks_forecast(inquiry)
