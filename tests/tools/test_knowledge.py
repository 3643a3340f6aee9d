"""The knowledge tools on the bundled examples: the knowledge-base search over any collection of
the scope, the lab-note search with the collection's own axes as modes, the card-effect search."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO
from tansaku.tools import toolset
from tansaku.tools.knowledge import NO_RESULT

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
SILICA = {
    "note-01-silica-sol-gel-dipcoat",
    "note-02-silica-spincoat-multilayer",
    "note-03-silica-nanoparticle-stober",
}


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    home = tmp_path_factory.mktemp("knowledge")
    client = tansaku.connect(home / "ws", embedder=HashEmbedder(32))
    cfg = EXAMPLES / "configs"
    assert client.ingest([EXAMPLES / "notes"], collection="notes", config=cfg / "notes.toml").ok
    cards = EXAMPLES / "cards" / "cards.jsonl"
    assert client.ingest([cards], collection="cards", config=cfg / "cards.toml").ok
    assert client.ingest(
        [EXAMPLES / "manuals"], collection="manuals", config=cfg / "manuals.toml"
    ).ok
    secret = tansaku.Record(
        id="s:body", doc_id="s", field="body", text="他チームの秘密の記録。食中毒の予防は極秘。",
        metadata={"title": "秘密の記録"},
    )  # fmt: skip
    client.ingest_records([secret], collection="manuals", team="other")
    own_axes = CollectionConfig(
        name="bench",
        axes=(
            Axis(name="reagent", mode=AxisMode.BM25, fields=("body",)),
            Axis(name="procedure", mode=AxisMode.DENSE, fields=("body",)),
        ),
    )
    bench = tansaku.Record(
        id="b1:body", doc_id="b1", field="body", text="TEOS をエタノールで希釈し 60 分撹拌した。",
        metadata={"title": "希釈の記録", "date": "2025-11-02"},
    )  # fmt: skip
    client.ingest_records([bench], collection="bench", config=own_axes)
    yield client
    client.close()


@pytest.fixture
def tools(ts):
    return toolset(ts, now=NOW)


def _call(tools, name, args):
    return json.loads(tools.call(name, args))


def _spec(tools, name):
    return next(s for s in tools.specs if s.name == name)


def test_the_tools_are_bound_to_what_exists(tools) -> None:
    names = [s.name for s in tools.specs]
    assert names[-3:] == ["search_rag_knowledge_base", "search_lab_notes", "search_card_effects"]
    rag = _spec(tools, "search_rag_knowledge_base").parameters["properties"]["collection_name"]
    assert rag["enum"] == ["manuals", "notes", "cards"]  # "reports" is bound but does not exist
    for name in names[-3:]:
        description = _spec(tools, name).description
        assert "使う場面" in description and "使わない場面" in description
        assert description.count('{"query"') >= 3


def test_lab_note_modes_are_the_collection_axes(tools) -> None:
    spec = _spec(tools, "search_lab_notes")
    mode = spec.parameters["properties"]["mode"]
    assert mode["enum"] == ["all", "material", "method", "combined"] and mode["default"] == "all"
    assert "- material: キーワード一致" in spec.description
    assert "- combined: 意味の近さ" in spec.description
    assert '"mode": "material"' in spec.description  # examples name real axes


def test_another_config_gives_other_modes(ts) -> None:
    tools = toolset(ts, collections={"notes": "bench"})
    spec = _spec(tools, "search_lab_notes")
    assert spec.parameters["properties"]["mode"]["enum"] == ["all", "reagent", "procedure"]
    out = _call(tools, "search_lab_notes", {"query": "TEOS", "mode": "reagent"})
    assert [r["doc_id"] for r in out["results"]] == ["b1"]
    assert out["axes"] == [{"name": "reagent", "mode": "bm25", "fields": ["body"]}]
    refused = _call(tools, "search_lab_notes", {"query": "TEOS", "mode": "material"})
    assert "all, reagent, procedure" in refused["error"]
    assert "search_card_effects" not in {s.name for s in tools.specs}  # no cards bound


def test_material_mode_matches_product_codes(tools) -> None:
    out = _call(tools, "search_lab_notes", {"query": "SA-1021", "mode": "material"})
    assert out["mode"] == "material" and [a["name"] for a in out["axes"]] == ["material"]
    found = {r["doc_id"] for r in out["results"]}
    assert found == SILICA  # only the three notes that use TEOS SA-1021
    first = out["results"][0]
    assert set(first) >= {"rank", "title", "date", "author", "doc_id", "similarity", "content"}
    assert set(first["axes"]) == {"material"} and "SA-1021" in json.dumps(
        out["results"], ensure_ascii=False
    )


def test_all_modes_blend_and_dates_filter(tools) -> None:
    out = _call(tools, "search_lab_notes", {"query": "アミラーゼの残存活性"})
    assert out["mode"] == "all" and len(out["axes"]) == 3
    assert out["results"][0]["doc_id"] == "note-08-amylase-thermal-stability"
    dated = _call(
        tools,
        "search_lab_notes",
        {"query": "シリカ", "date_from": "2025-09-05", "date_to": "2025-09-30"},
    )
    assert dated["results"] and all(
        "2025-09-05" <= r["date"] <= "2025-09-30" for r in dated["results"]
    )
    bad = _call(tools, "search_lab_notes", {"query": "シリカ", "date_from": "9月5日"})
    assert "YYYY-MM-DD" in bad["error"]


def test_card_effect_search(tools) -> None:
    out = _call(tools, "search_card_effects", {"query": "相手のリーダーにダメージを与えるカード"})
    assert out["results"] and out["retry_stage"] == 0
    first = out["results"][0]
    assert set(first) >= {
        "rank", "title", "card_id", "class", "type", "cost", "rarity",
        "matched_field", "matched_text", "similarity", "content",
    }  # fmt: skip
    assert any("リーダー" in r["matched_text"] for r in out["results"][:3])
    titles = [r["title"] for r in out["results"]]
    assert len(titles) == len(set(titles))  # one entry per card (max over its fields)


def test_card_filters_and_the_zero_hit_suggestion(tools) -> None:
    cheap = _call(tools, "search_card_effects", {"query": "カードを引く", "max_cost": 2})
    assert cheap["results"] and all(r["cost"] <= 2 for r in cheap["results"])
    spells = _call(
        tools, "search_card_effects", {"query": "ダメージ", "card_type": "スペル", "top_k": 20}
    )
    assert spells["results"] and {r["type"] for r in spells["results"]} == {"スペル"}
    none = _call(tools, "search_card_effects", {"query": "回復", "card_class": "存在しないクラス"})
    assert none["results"] == [] and "見つかりませんでした" in none["suggestion"]


def test_knowledge_base_over_every_collection(tools) -> None:
    out = _call(tools, "search_rag_knowledge_base", {"query": "食中毒の予防方法", "top_k": 3})
    assert out["collections"] == ["manuals", "notes", "cards"]
    first = out["results"][0]
    assert first["collection"] == "manuals" and first["doc_id"] == "hygiene"
    assert first["chapter"] == "第2章 食中毒予防" and "つけない" in first["content"]
    assert [r["rank"] for r in out["results"]] == list(range(1, len(out["results"]) + 1))
    assert "秘密" not in json.dumps(out, ensure_ascii=False)  # another team's record


def test_knowledge_base_says_when_nothing_matches(tools) -> None:
    args = {"query": "ぱぴぷぺぽ星人の年金制度", "collection_name": "cards"}
    out = _call(tools, "search_rag_knowledge_base", args)
    assert out["results"] == [] and out["no_result"] == NO_RESULT and out["message"]
    refused = _call(tools, "search_rag_knowledge_base", {"query": "a", "collection_name": "x"})
    assert "collection_name" in refused["error"]


def test_scope_comes_from_the_toolset(ts) -> None:
    theirs = toolset(ts, team="other", collections={"manuals": "manuals"})
    out = _call(theirs, "search_rag_knowledge_base", {"query": "食中毒の予防"})
    assert [r["doc_id"] for r in out["results"]] == ["s"]
    refused = _call(theirs, "search_rag_knowledge_base", {"query": "食中毒", "team": "default"})
    assert "引数 team はありません" in refused["error"]
    assert {s.name for s in theirs.specs}.isdisjoint({"search_lab_notes", "search_card_effects"})
