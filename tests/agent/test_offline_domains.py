"""The offline answer on the bundled lab notes and cards, both in scope: each question is
answered from the collection that holds it, and a card answer lists only cards whose effect
says what was asked."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

import tansaku
from tansaku.agent.offline import answer_offline
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO
from tansaku.tools import toolset

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    client = tansaku.connect(tmp_path_factory.mktemp("domains") / "ws", embedder=HashEmbedder(32))
    cfg = EXAMPLES / "configs"
    assert client.ingest([EXAMPLES / "notes"], collection="notes", config=cfg / "notes.toml").ok
    cards = EXAMPLES / "cards" / "cards.jsonl"
    assert client.ingest([cards], collection="cards", config=cfg / "cards.toml").ok
    yield toolset(client, now=NOW)
    client.close()


def _tools_called(answer) -> list[str | None]:
    return [e.tool for e in answer.events if e.type == "tool_call"]


def test_card_question_lists_only_matching_effects(tools) -> None:
    answer = answer_offline("リーダーを回復する効果のカード", tools)
    assert _tools_called(answer) == ["search_collections"]
    assert not answer.unanswered and answer.citations
    lines = [line for line in answer.text.splitlines() if line.strip()]  # one quote or a list
    assert lines and all("回復" in line for line in lines)
    assert {c.collection for c in answer.citations} == {"cards"}


def test_lab_note_question_goes_to_the_lab_notes(tools) -> None:
    answer = answer_offline("TEOSの加水分解の実験で使った試薬", tools)
    assert all(c.collection == "notes" for c in answer.citations)


def test_card_question_with_nothing_matching_is_unanswered(tools) -> None:
    answer = answer_offline("空を飛ぶ効果のカード", tools)
    assert answer.unanswered and "見つかりません" in answer.text


def _only(tools, name: str):
    return toolset(tools.scope.client, collections=[name], now=NOW)


def test_cards_alone_share_words_and_list_the_searchs_cards_hedged(tools) -> None:
    """With only the cards ticked, a card question the calibration is unsure of still lists
    the card search's own best cards — as the search page would — said to be unsure and
    logged as unanswered; a question sharing no word with any card is declined."""
    from tansaku.agent.unanswered import UnansweredLog

    log = UnansweredLog(tools.scope.client.workspace.home / "appdb.sqlite")
    cards = _only(tools, "cards")
    answer = answer_offline("継続ダメージ", cards, unanswered=log)
    assert answer.citations and {c.collection for c in answer.citations} == {"cards"}
    if answer.text.startswith("はっきり合うカードは見つかりませんでした"):
        assert "近いカード" in answer.text
        assert any(e.question == "継続ダメージ" for e in log.list(team="default"))
    assert answer_offline("明日の天気は？", cards).unanswered


def test_a_period_or_a_person_alone_lists_their_records(tools) -> None:
    """「先月の実験ノートは?」「佐藤さんが担当した実験」: nothing to search for but the collection's
    own words, a period and a person — the records of that period or person, by date."""
    notes = _only(tools, "notes")
    month = answer_offline("先月の実験ノートは？", notes)
    assert month.text.startswith("2025-11-01〜2025-11-30の記録は次の")
    assert month.citations and all(c.date.startswith("2025-11") for c in month.citations)
    sato = answer_offline("佐藤さんが担当した実験", notes)
    assert sato.text.startswith("佐藤さんの記録は次の")
    assert [c.doc_id for c in sato.citations] == [
        "note-01-silica-sol-gel-dipcoat",
        "note-02-silica-spincoat-multilayer",
    ]


def test_a_kind_the_question_asks_for_narrows_the_cards(tools) -> None:
    """「ドラゴンのフォロワー」 keeps to cards whose class and type hold those values; a value the
    card acts on (「アミュレットのカウントダウンを早める」) narrows nothing."""
    from tansaku.tools.scope.conditions import facet_conditions

    client = tools.scope.client
    hits = client.search("紅蓮の飛竜 疾走 カウントダウン", collection="cards", top_k=20).hits
    kinds = {(h.record.metadata.get("class"), h.record.metadata.get("type")) for h in hits}
    assert ("ドラゴン", "フォロワー") in kinds and any(t == "アミュレット" for _, t in kinds)
    assert facet_conditions("疾走を持つドラゴンのフォロワー", hits) == (
        "class=ドラゴン",
        "type=フォロワー",
    )
    assert facet_conditions("アミュレットのカウントダウンを早めるカード", hits) == ()
    assert facet_conditions("カウントダウンを進めるアミュレット", hits) == ("type=アミュレット",)
    answer = answer_offline("疾走を持つドラゴンのフォロワー", _only(tools, "cards"))
    assert answer.citations
