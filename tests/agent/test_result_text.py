"""What a person reads of a tool call and its result: Japanese, never JSON or field names."""

from __future__ import annotations

import json

from tansaku.agent.result_text import call_text, summarize, tool_label


def test_results_are_short_japanese_lists() -> None:
    rows = {
        "results": [
            {"title": f"日報{i}", "date": "2025-12-10", "store": "新宿店"} for i in range(7)
        ]
    }
    text = summarize(json.dumps(rows, ensure_ascii=False))
    assert text.splitlines()[0] == "1. 日報0(2025-12-10・新宿店)" and text.endswith("ほか 2 件")
    stats = {
        "period": {"start_date": "2025-11-01", "end_date": "2025-11-30"},
        "summary": {"total_reports": 109, "claim_count": 15, "claim_rate": "13.8%"},
    }
    figures = summarize(json.dumps(stats))
    assert figures == "2025-11-01〜2025-11-30 日報 109、クレーム 15、発生率 13.8%"
    assert summarize(json.dumps({"error": "表データが登録されていません"})).startswith("エラー: ")
    assert (
        summarize(json.dumps({"results": [], "message": "見つかりませんでした"}))
        == "見つかりませんでした"
    )


def test_calls_name_the_tool_and_the_question_in_words() -> None:
    assert tool_label("search_collections") == "コレクションを検索"
    args = {"query": "冷蔵庫の故障", "collections": ["reports", "manuals"]}
    assert call_text(args) == "「冷蔵庫の故障」 (reports、manuals)"


def test_the_unanswered_list_shows_tokyo_time() -> None:
    from tansaku.cli.ask import _tokyo

    assert _tokyo("2026-11-26T12:16:57+00:00") == "2026-11-26 21:16 JST"
    assert _tokyo("not a time") == "not a time"


def test_a_row_without_a_name_shows_its_values() -> None:
    """An aggregate's row (SELECT count(*) …) is its figures, never an empty 「1. 」."""
    import json

    from tansaku.agent.result_text import summarize

    assert summarize(json.dumps({"results": [{"count_star()": 28}]})) == "1. 28"
    text = summarize(json.dumps({"results": [{"category": None, "n": 3, "avg": 4.5}]}))
    assert text == "1. 3 / 4.5"
