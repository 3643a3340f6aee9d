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
    bullets = [line for line in answer.text.splitlines() if line.startswith("・")]
    assert bullets and all("回復" in line for line in bullets)
    assert {c.collection for c in answer.citations} == {"cards"}


def test_lab_note_question_goes_to_the_lab_notes(tools) -> None:
    answer = answer_offline("TEOSの加水分解の実験で使った試薬", tools)
    assert all(c.collection == "notes" for c in answer.citations)


def test_card_question_with_nothing_matching_is_unanswered(tools) -> None:
    answer = answer_offline("空を飛ぶ効果のカード", tools)
    assert answer.unanswered and "見つかりません" in answer.text
