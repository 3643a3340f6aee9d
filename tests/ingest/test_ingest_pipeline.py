"""Ingest pipeline behaviour with the deterministic HashEmbedder (fast, no model)."""

from __future__ import annotations

import json

import pytest

import tansaku
import tansaku.errors
from tansaku.config import CollectionConfig
from tansaku.testing import HashEmbedder

NOTE = """# 乳酸菌の培養条件の検討
日付: 2025-10-14
担当: 佐藤

## 目的
乳酸菌 LP-07 の最適な培養温度を調べる。

## 材料
- MRS培地 500 mL、品番 MR-1100
- 乳酸菌 LP-07

## 方法
1. 培地を121℃で15分滅菌する。
2. 30℃、37℃、42℃で24時間培養する。

## 結果
37℃で最も菌数が多かった。
"""

CONFIG = """
name = "notes"
[[axes]]
name = "material"
fields = ["materials_methods"]
mode = "bm25"
[[axes]]
name = "combined"
fields = ["combined"]
mode = "dense"
[ingest.markdown]
fields = { materials_methods = ["材料", "方法"] }
whole_field = "combined"
"""


@pytest.fixture
def ts(tmp_path):
    emb = HashEmbedder(32)
    with tansaku.connect(tmp_path / "home", embedder=emb) as client:
        client.test_embedder = emb  # type: ignore[attr-defined]
        yield client


@pytest.fixture
def notes(tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "note-a.md").write_text(NOTE, encoding="utf-8")
    (d / "note-b.md").write_text(
        NOTE.replace("LP-07", "LB-12").replace("乳酸菌の", "ビフィズス菌の"), encoding="utf-8"
    )
    cfg = tmp_path / "notes.toml"
    cfg.write_text(CONFIG, encoding="utf-8")
    return d, cfg


def test_first_ingest_then_noop(ts, notes):
    d, cfg = notes
    first = ts.ingest([d], collection="notes", config=cfg)
    assert (first.inserted, first.updated, first.unchanged, first.deleted) == (4, 0, 0, 0)
    assert first.embedded == 2  # only the `combined` field feeds a dense axis
    second = ts.ingest([d], collection="notes", config=cfg)
    assert (second.inserted, second.updated, second.unchanged, second.embedded) == (0, 0, 4, 0)
    ids = {h.record.id for h in ts.search("MR-1100", collection="notes", top_k=10).hits}
    assert any(i.endswith(":materials_methods") for i in ids)


def test_changed_content_replaces_and_is_reembedded(ts, notes):
    d, cfg = notes
    ts.ingest([d], collection="notes", config=cfg)
    (d / "note-a.md").write_text(NOTE.replace("37℃で最も", "42℃で最も"), encoding="utf-8")
    report = ts.ingest([d], collection="notes", config=cfg)
    assert (report.inserted, report.updated, report.unchanged) == (0, 1, 3)
    assert report.embedded == 1
    rec = ts.collection("notes").store.get("default", ["note-a:combined"])[0]
    assert "42℃で最も" in rec.text


def test_sync_deletes_vanished_documents_only_under_given_roots(ts, notes, tmp_path):
    d, cfg = notes
    other = tmp_path / "other.txt"
    other.write_text("別のフォルダの文書です。培養とは関係ありません。", encoding="utf-8")
    ts.ingest([d], collection="notes", config=cfg)
    ts.ingest([other], collection="notes")
    (d / "note-b.md").unlink()
    keep = ts.ingest([d], collection="notes")
    assert keep.deleted == 0
    synced = ts.ingest([d], collection="notes", sync=True)
    assert synced.deleted == 2
    store = ts.collection("notes").store
    assert store.count("default") == 3  # note-a (2 records) + other.txt


def test_dry_run_writes_nothing_and_reports_actions(ts, notes, tmp_path):
    d, cfg = notes
    report = ts.ingest([d], collection="notes", config=cfg, dry_run=True)
    assert report.dry_run and report.inserted == 4
    assert not ts.has_collection("notes")
    from tansaku.ingest.pipeline import write_audit

    audit = write_audit(report, tmp_path / "audit.jsonl")
    rows = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    assert {r["action"] for r in rows} == {"insert"}
    assert {"id", "field", "text_len", "action"} <= set(rows[0])
    ts.ingest([d], collection="notes", config=cfg)
    (d / "note-b.md").unlink()
    again = ts.ingest([d], collection="notes", dry_run=True, sync=True)
    assert (again.unchanged, again.deleted) == (2, 2)
    assert ts.collection("notes").store.count("default") == 4


def test_bad_files_are_reported_and_the_rest_is_ingested(ts, notes, tmp_path):
    d, cfg = notes
    (d / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a real pdf")
    (d / "cards.jsonl").write_text(
        '{"id": "1", "name": "ok", "text": "正しい行"}\n{broken\n', encoding="utf-8"
    )
    report = ts.ingest([d, tmp_path / "missing.md"], collection="notes", config=cfg)
    paths = [f.path for f in report.failed]
    assert any(p.endswith("broken.pdf") for p in paths)
    assert any("cards.jsonl" in p for p in paths)
    assert any(p.endswith("missing.md") for p in paths)
    assert report.inserted >= 5
    assert not report.ok


def test_interrupted_ingest_leaves_readable_collection_and_resumes(ts, notes, monkeypatch):
    d, cfg = notes
    from tansaku.store.edge import EdgeStore

    real = EdgeStore.upsert
    calls = {"n": 0}

    def flaky(self, tenant, points):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self, tenant, points)

    monkeypatch.setattr("tansaku.ingest.apply.BATCH", 1)
    monkeypatch.setenv("TANSAKU_CHECKPOINT_S", "0")  # publish after every batch
    monkeypatch.setattr(EdgeStore, "upsert", flaky)
    with pytest.raises(KeyboardInterrupt):
        ts.ingest([d], collection="notes", config=cfg)
    monkeypatch.setattr(EdgeStore, "upsert", real)
    assert ts.collection("notes").store.count("default") == 1  # the first batch's checkpoint
    assert ts.search("培養", collection="notes").hits
    resumed = ts.ingest([d], collection="notes", config=cfg)
    assert resumed.inserted == 3 and resumed.unchanged == 1
    assert ts.collection("notes").store.count("default") == 4


def test_interrupted_ingest_without_checkpoint_commits_nothing(ts, notes, monkeypatch):
    d, cfg = notes
    from tansaku.store.edge import EdgeStore

    ts.ingest([d], collection="notes", config=cfg)
    before = ts.collection("notes").state.to_json()
    (d / "extra.md").write_text(
        "# 追加\n\n乳酸菌の培養温度を三十七度に変更した。", encoding="utf-8"
    )

    def broken(self, tenant, points):
        raise KeyboardInterrupt

    monkeypatch.setattr(EdgeStore, "upsert", broken)
    with pytest.raises(KeyboardInterrupt):
        ts.ingest([d], collection="notes", config=cfg)
    col = ts.collection("notes")
    assert col.store.count("default") == 4 and col.state.to_json() == before
    gens = sorted(p.name for p in (col.path / "gens").iterdir())
    assert gens == [col.gen.name]  # the abandoned working generation is gone


def test_bm25_vectors_are_reencoded_when_lengths_drift(ts):
    short = [
        tansaku.Record(id=f"s{i}:body", doc_id=f"s{i}", field="body", text="短い文書です")
        for i in range(3)
    ]
    cfg = CollectionConfig(name="drift", axes=(tansaku.Axis(name="b", mode=tansaku.AxisMode.BM25),))
    ts.ingest_records(short, collection="drift", config=cfg)
    st = ts.collection("drift").state.stats("default", "body")
    first_avg = st.avgdl_written
    long_text = "長い文書です。" + "在庫の確認と発注の手順を詳しく説明します。" * 20
    ts.ingest_records(
        [tansaku.Record(id="l:body", doc_id="l", field="body", text=long_text)], collection="drift"
    )
    st = ts.collection("drift").state.stats("default", "body")
    assert st.avgdl_written == pytest.approx(st.avgdl)
    assert st.avgdl_written > first_avg * 2


def test_team_names_are_validated(ts, notes):
    d, cfg = notes
    with pytest.raises(tansaku.errors.ConfigError, match="チーム名"):
        ts.ingest([d], collection="notes", team="../etc", config=cfg)


def _bm25_only(name: str) -> CollectionConfig:
    return CollectionConfig(name=name, axes=(tansaku.Axis(name="b", mode=tansaku.AxisMode.BM25),))


def _rec(doc: str, n: int, text: str) -> tansaku.Record:
    return tansaku.Record(id=f"{doc}:body:{n}", doc_id=doc, field="body", text=text)


def test_ingest_without_sync_reads_only_its_documents_yet_drops_their_stale_chunks(ts):
    cfg = _bm25_only("daily")
    first = [_rec("日報-1", i, f"{i}番目の売上報告です。レジ締めで差額なし。") for i in range(3)]
    other = [_rec("日報-2", 0, "渋谷店の在庫確認。冷蔵庫の温度が高め。")]
    ts.ingest_records(first + other, collection="daily", config=cfg)
    # 日報-1 now has one chunk: the two others are stale; 日報-2 is not in this run and stays
    report = ts.ingest_records(
        [_rec("日報-1", 0, "売上報告を一つにまとめました。")], collection="daily"
    )
    assert (report.updated, report.deleted, report.unchanged) == (1, 2, 0)
    store = ts.collection("daily").store
    assert {r.id for r in store.get("default", ["日報-2:body:0", "日報-1:body:1"])} == {
        "日報-2:body:0"
    }
    st = ts.collection("daily").state.stats("default", "body")
    assert st.count == 2


def test_a_record_id_that_changes_document_is_an_update_not_a_second_count(ts):
    cfg = _bm25_only("moved")
    rec = tansaku.Record(
        id="手順書:本文", doc_id="手順書-旧", field="body", text="開店前の清掃手順。"
    )
    ts.ingest_records([rec], collection="moved", config=cfg)
    moved = tansaku.Record(
        id="手順書:本文", doc_id="手順書-新", field="body", text="開店前の清掃手順。"
    )
    report = ts.ingest_records([moved], collection="moved")
    assert (report.inserted, report.updated) == (0, 1)
    col = ts.collection("moved")
    assert col.state.stats("default", "body").count == 1
    assert col.store.get("default", ["手順書:本文"])[0].doc_id == "手順書-新"
