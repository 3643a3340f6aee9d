"""End to end over the bundled examples with the real analyzer, embedder and engine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tansaku
from tansaku.config import Axis, AxisMode
from tansaku.errors import UnknownName
from tansaku.store.base import Filter

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONFIGS = EXAMPLES / "configs"


@pytest.fixture(scope="module")
def ws(tmp_path_factory, embedding_cache_dir):
    home = tmp_path_factory.mktemp("e2e-home")
    (home / "cache").mkdir()
    cache = embedding_cache_dir / "embeddings.sqlite"
    if cache.exists():
        shutil.copy(cache, home / "cache" / "embeddings.sqlite")
    ts = tansaku.connect(home)
    for name, src in [
        ("notes", EXAMPLES / "notes"),
        ("manuals", EXAMPLES / "manuals"),
        ("cards", EXAMPLES / "cards" / "cards.jsonl"),
    ]:
        report = ts.ingest([src], collection=name, config=CONFIGS / f"{name}.toml")
        assert report.ok, report.failed
        assert report.inserted > 0
    ts.embedder.close()
    shutil.copy(home / "cache" / "embeddings.sqlite", cache)
    yield ts
    ts.close()


def _docs(result) -> list[str]:
    return [h.doc_id for h in result.hits]


def test_reingest_embeds_nothing_and_changes_nothing(ws):
    report = ws.ingest([EXAMPLES / "notes"], collection="notes")
    assert (report.inserted, report.updated, report.deleted, report.embedded) == (0, 0, 0, 0)
    assert report.unchanged == 62 or report.unchanged > 0


def test_bm25_axis_finds_exact_product_code(ws):
    # A lot/product code only matches lexically: the material (BM25) axis must carry it.
    res = ws.search("ET-3300", collection="notes", top_k=3)
    assert res.hits
    top = res.hits[0]
    assert "material" in top.axes and top.axes["material"].rank == 1


def test_bm25_only_finds_code_that_dense_alone_misranks(ws):
    bm25 = (Axis(name="bm25", mode=AxisMode.BM25),)
    res = ws.search("TR-0200", collection="notes", axes=bm25, top_k=5)
    assert res.hits
    assert all("tr-0200" in h.record.text.lower() for h in res.hits)


def test_dense_axis_finds_paraphrase_without_shared_words(ws):
    # 「ばい菌を持ち込まない」 shares no content word with the manual's 「つけない」 wording;
    # the dense axis must surface the food-poisoning chapter.
    dense = (Axis(name="dense", mode=AxisMode.DENSE),)
    res = ws.search(
        "食べ物にばい菌がうつらないようにするには", collection="manuals", axes=dense, top_k=5
    )
    chapters = [h.record.metadata.get("chapter", "") for h in res.hits]
    assert any("食中毒" in c or "衛生" in c for c in chapters)


def test_hybrid_default_card_queries_that_used_to_return_nothing(ws):
    for query in [
        "フィールドのカードを手札に戻すカード",
        "相手のリーダーにダメージを与えるカード",
        "ランダムな相手のフォロワーにダメージを与えるカード",
    ]:
        res = ws.search(query, collection="cards", top_k=10)
        assert len(res.hits) == 10, query


def test_hits_explain_themselves_and_group_by_doc(ws):
    res = ws.search("相手のリーダーにダメージ", collection="cards", top_k=10)
    assert len({h.doc_id for h in res.hits}) == len(res.hits)
    for h in res.hits:
        assert h.axes, "every hit names the axes that found it"
        for a in h.axes.values():
            assert a.rank >= 1
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    assert res.plan.fusion.method is tansaku.FusionMethod.LINEAR
    assert [a.name for a in res.plan.stage.axes] == [
        "effect_keyword",
        "effect_semantic",
        "combined",
    ]


def test_filters_field_and_metadata(ws):
    res = ws.search(
        "ダメージ", collection="cards", top_k=20, filter=Filter(equals={"class": "ヴァンパイア"})
    )
    assert res.hits
    assert all(h.record.metadata["class"] == "ヴァンパイア" for h in res.hits)
    with pytest.raises(UnknownName, match="使えるフィールド: body"):  # not a silent 0 hits
        ws.search("手順", collection="manuals", top_k=5, filter=Filter(fields=("nothing",)))


def test_min_score_and_top_k(ws):
    res = ws.search("食中毒", collection="manuals", top_k=2)
    assert len(res.hits) == 2
    res = ws.search("食中毒", collection="manuals", top_k=10, min_score=0.99)
    assert all(h.score >= 0.99 for h in res.hits)


def test_tenant_isolation(ws):
    ws.ingest_records(
        [
            tansaku.Record(
                id="secret:body",
                doc_id="secret",
                field="body",
                text="チームBだけの秘密のレシピ:特製デミグラスソース",
            )
        ],
        collection="manuals",
        team="team-b",
    )
    a = ws.search("特製デミグラスソースのレシピ", collection="manuals", top_k=20)
    assert "secret" not in _docs(a)
    b = ws.search("特製デミグラスソースのレシピ", collection="manuals", team="team-b")
    assert _docs(b) == ["secret"]
