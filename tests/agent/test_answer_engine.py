"""The generic offline answer: every collection of the scope is searched, a team's own plain
collection (an FAQ uploaded as CSV) answers with its answer part, an off-topic question is
declined and logged under the collections searched, and a bad question is refused before
anything is searched or logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.agent import ask, unanswered_log
from tansaku.agent.answer.sentences import sentences_of
from tansaku.errors import InvalidRequest
from tansaku.testing import HashEmbedder
from tansaku.tools import toolset

from .clock import NOW

FAQ = """id,質問,回答
faq-01,有給休暇の申請方法を教えてください,勤怠システムの「休暇申請」画面から、取得日の3営業日前までに申請してください。上長が承認すると確定します。
faq-02,交通費の精算はいつまでに行えばよいですか,交通費は利用した月の翌月5日までに経費精算システムで申請してください。領収書の画像を添付します。
faq-03,パスワードを忘れたときはどうすればいいですか,ログイン画面の「パスワードを忘れた方」から再設定メールを送ってください。届かない場合は情報システム部(内線2100)へ連絡してください。
faq-04,社員証をなくした場合の手続きは,"総務部に紛失届を提出してください。再発行には5営業日かかり、手数料1,000円が給与から差し引かれます。"
faq-05,健康診断の日程を変更できますか,人事部の健康管理担当へメールで希望日を3つ伝えてください。受診期限は毎年11月末です。
faq-06,在宅勤務の申請はどこからしますか,勤怠システムの「在宅勤務」メニューから前日の17時までに申請してください。
"""


@pytest.fixture(scope="module")
def faq_home(home, tmp_path_factory) -> Path:
    """The agent workspace (reports, manuals) plus a plain ``faq`` collection from a CSV."""
    folder = tmp_path_factory.mktemp("faq-src")
    (folder / "faq.csv").write_text(FAQ, encoding="utf-8")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as client:
        if not client.has_collection("faq"):
            assert client.ingest([folder], collection="faq").ok
    return home


@pytest.fixture
def client(faq_home):
    with tansaku.connect(faq_home, embedder=HashEmbedder(32)) as ts:
        yield ts


def test_a_plain_collection_answers_with_only_it_in_scope(client) -> None:
    answer = ask(client, "有給休暇の申請方法は？", collections=["faq"], now=NOW)
    assert not answer.unanswered, answer.text
    assert [c.collection for c in answer.citations] == ["faq"] * len(answer.citations)
    assert answer.citations[0].doc_id == "faq-01"
    assert "勤怠システム" in answer.text and "質問:" not in answer.text


def test_every_collection_in_scope_is_searched(client) -> None:
    answer = ask(
        client, "社員証を紛失したときの手続き", collections=["reports", "manuals", "faq"], now=NOW
    )
    assert not answer.unanswered
    assert answer.citations[0].collection == "faq" and answer.citations[0].doc_id == "faq-04"
    call = next(e for e in answer.events if e.type == "tool_call")
    assert call.arguments["collections"] == ["reports", "manuals", "faq"]


def test_off_topic_is_declined_and_logged_under_the_collections_searched(client) -> None:
    before = len(unanswered_log(client).list(team="default"))
    answer = ask(client, "パスワードを忘れたときは？", collections=["reports"], now=NOW)
    assert answer.unanswered and not answer.citations
    logged = unanswered_log(client).list(team="default")
    assert len(logged) == before + 1 and logged[0].collection == "reports"


def test_thoughts_say_why_in_japanese_and_results_are_not_json(client) -> None:
    answer = ask(client, "交通費の精算の締め切り", collections=["faq", "manuals"], now=NOW)
    thoughts = [e.text for e in answer.events if e.type == "thought"]
    assert any("検索" in t for t in thoughts) and not any("clear" in t for t in thoughts)
    results = [e.text for e in answer.events if e.type == "tool_result"]
    assert results and not any(r.lstrip().startswith(("{", "[")) for r in results)


def test_a_list_of_names_is_a_scope_with_roles_read_from_configs(client) -> None:
    tools = toolset(client, collections=["reports", "faq", "manuals"])
    assert tools.scope.collections == {"reports": "reports", "faq": "faq", "manuals": "manuals"}


@pytest.mark.parametrize("question", ["", "   ", "あ" * 10_000, "冷蔵庫\x1b[31mの故障"])
def test_a_bad_question_is_refused_and_nothing_is_logged(client, question) -> None:
    before = len(unanswered_log(client).list(team="default"))
    with pytest.raises(InvalidRequest):
        ask(client, question, collections=["faq"], now=NOW)
    assert len(unanswered_log(client).list(team="default")) == before


def test_cli_ask_with_a_plain_collection(faq_home, monkeypatch) -> None:
    from tansaku.cli.main import app

    monkeypatch.setenv("TANSAKU_EMBEDDER", "hash")
    runner = CliRunner()
    args = ["ask", "交通費の精算はいつまで？", "-c", "faq", "--no-llm", "--json"]
    result = runner.invoke(app, [*args, "--home", str(faq_home), "--now", "2025-12-11"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert not data["unanswered"] and data["citations"][0]["doc_id"] == "faq-02"
    for bad in ("", "あ" * 10_000, "質問\x07です"):
        refused = runner.invoke(app, ["ask", bad, "-c", "faq", "--home", str(faq_home)])
        assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_headings_lists_and_materials_are_never_quoted() -> None:
    note = (
        "# シリカ薄膜の作製\n日付: 2025-09-02\n担当: 佐藤\n## 材料\n"
        "- TEOS(テトラエトキシシラン)10 mL、品番 SA-1021\n- エタノール 20 mL\n"
        "## 方法\n1. TEOS とエタノールを混ぜ、30分撹拌した。\n2. 塩酸を滴下して加水分解した。\n"
        "| 温度 | 膜厚 |\n|---|---|\n| 400 | 120 |\n"
    )
    quoted = sentences_of(note, "シリカ薄膜の作製")
    assert quoted == ["TEOS とエタノールを混ぜ、30分撹拌した。", "塩酸を滴下して加水分解した。"]


def test_the_agents_knowledge_tool_ranks_the_scope_together_and_declines(client) -> None:
    """With a model, the same core: ``search_rag_knowledge_base`` ranks every collection's hits
    on the calibrated probability and gives no result where the offline engine declines."""
    tools = toolset(client, collections=["reports", "manuals", "faq"], now=NOW)
    found = json.loads(tools.call("search_rag_knowledge_base", {"query": "社員証を紛失した"}))
    assert found["results"][0]["doc_id"] == "faq-04"
    assert [r["rank"] for r in found["results"]] == list(range(1, len(found["results"]) + 1))
    off = json.loads(tools.call("search_rag_knowledge_base", {"query": "明日の東京の天気"}))
    assert off["results"] == [] and off["no_result"] == "[[NO_RAG_RESULT]]"


def test_a_named_store_or_person_keeps_the_answer_to_their_records(client) -> None:
    """「昨日新宿店で…」 filters the reports by store (the manuals, which have no store, are
    searched whole); a store or person nobody recorded finds nothing rather than another's."""
    from tansaku.text.names import people_in, stores_in

    assert stores_in("昨日新宿店でどんなクレームがあった？") == ["新宿店"]
    assert people_in("佐藤さんが担当した実験") == ["佐藤"]
    answer = ask(
        client, "昨日新宿店でどんなことがあった？", collections=["reports", "manuals"], now=NOW
    )
    stores = {c.store for c in answer.citations if c.collection == "reports"}
    assert stores <= {"新宿店"}
    nobody = ask(client, "山田花子さんの日報", collections=["reports"], now=NOW)
    assert nobody.unanswered


def test_a_day_nobody_recorded_is_named_in_the_reason(client) -> None:
    from datetime import timedelta

    answer = ask(
        client, "昨日の問題を教えて", collections=["reports"], now=NOW + timedelta(days=400)
    )
    assert answer.unanswered
    day = (NOW + timedelta(days=399)).date().isoformat()
    assert f"{day}〜{day}の記録はありません" in answer.text


def test_a_decimal_is_no_list_mark_and_the_unit_asked_for_wins() -> None:
    """「4.0 mLの条件で…」 stays whole (4. is no list number); 何層 asks for a number of 層,
    何度 a temperature in °C."""
    from tansaku.agent.answer.sentences import _answer_type

    note = "アンモニア量を増やすと粒径は大きくなった。4.0 mLの条件で最も単分散性がよかった。"
    assert "4.0 mLの条件で最も単分散性がよかった。" in sentences_of(note)
    layers = _answer_type("スピンコートで何層まで積層しましたか")
    assert any(p.search("1 / 3 / 5層まで積層した") for p in layers[1:])
    heat = _answer_type("ハンバーグの芯温は何度？")
    assert any(p.search("中心部が75 °Cで1分間以上") for p in heat[1:])


def test_where_to_look_and_the_comments_on_a_post(client) -> None:
    """「高橋美咲さんの日報で…」 keeps to daily reports (not her bulletin-board post); a question
    about who commented on a post shows the post's comments with their authors."""
    diary = ask(
        client,
        "高橋美咲さんの日報で冷蔵庫のことが書いてあるのはどれ？",
        collections=["reports"],
        now=NOW,
    )
    assert diary.citations and diary.citations[0].doc_id.startswith("DR-")
    who = ask(
        client, "ウォークイン冷蔵庫の投稿にコメントしたのは誰？", collections=["reports"], now=NOW
    )
    comments = [c for c in who.citations if c.doc_id.startswith("CMT-")]
    assert who.citations[0].doc_id.startswith("BBS-") and comments
    assert all(line.startswith("コメント: ") for line in who.text.splitlines()[1:])


def test_a_quote_cites_the_heading_it_stands_under(client) -> None:
    """The citation names the section of the quoted sentence (「2.1 食中毒予防の3原則」), not
    whatever part of the manual the search matched."""
    from tansaku.agent.answer.sentences import sections_of

    manual = (
        "# 衛生管理\n## 2.1 食中毒予防の3原則\n食中毒予防の基本は「つけない」「増やさない」です。\n"
    )
    assert sections_of(manual, "衛生管理") == [
        ("食中毒予防の基本は「つけない」「増やさない」です。", "2.1 食中毒予防の3原則")
    ]
    answer = ask(client, "食中毒の予防方法を教えて", collections=["manuals"], now=NOW)
    quoted = [c for c in answer.citations if c.section]
    assert not answer.unanswered and quoted
