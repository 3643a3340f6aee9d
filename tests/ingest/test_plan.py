"""The ingest plan is pure: records + what is stored in, what to add, update and delete out."""

from __future__ import annotations

from pathlib import Path

from tansaku.ingest.plan import dedupe, plan_ingest
from tansaku.records import Record
from tansaku.store.base import StoredInfo


def rec(rid: str, text: str, **meta: str) -> Record:
    doc, _, field = rid.partition(":")
    return Record(id=rid, doc_id=doc, field=field or "body", text=text, metadata=meta)


def stored(r: Record, length: int = 7, content: str | None = None) -> StoredInfo:
    return StoredInfo(r, content or r.content_hash(), length)


def test_inserts_updates_unchanged_and_stale_chunks() -> None:
    same = rec("日報1:本文", "冷蔵庫の温度が上がらなかった")
    changed = rec("日報2:本文", "提供が遅いとのクレーム(追記あり)")
    new = rec("日報3:本文", "レジの現金が合わなかった")
    old_changed = stored(rec("日報2:本文", "提供が遅いとのクレーム"), 5)
    stale = stored(rec("日報1:追記", "翌日に再点検した"), 3)  # a chunk 日報1 no longer has
    other = stored(rec("日報9:本文", "ほかの文書"), 4)  # not in this run: kept
    plan = plan_ingest(
        [same, changed, new],
        {i.record.id: i for i in (stored(same), old_changed, stale, other)},
        tenant="新宿",
    )
    assert plan.tenant == "新宿"
    assert plan.inserts == (new,) and plan.updates == (changed,) and plan.unchanged == 1
    assert plan.deletes == (stale,) and plan.replaced == {"日報2:本文": old_changed}
    assert plan.changed == (new, changed) and not plan.empty
    assert plan.hashes["日報3:本文"] == new.content_hash()
    assert [(a.id, a.action) for a in plan.audit] == [
        ("日報1:本文", "unchanged"),
        ("日報2:本文", "update"),
        ("日報3:本文", "insert"),
        ("日報1:追記", "delete"),
    ]
    report = plan.report(embedded=2)
    assert (report.inserted, report.updated, report.unchanged, report.deleted) == (1, 1, 1, 1)
    assert report.embedded == 2 and not report.dry_run


def test_sync_deletes_documents_gone_from_the_roots_or_from_the_records(tmp_path: Path) -> None:
    root = tmp_path / "日報"
    inside = stored(rec("a:本文", "消えた日報", source=str(root / "a.md")))
    outside = stored(rec("b:本文", "別のフォルダ", source=str(tmp_path / "別" / "b.md")))
    keep = rec("c:本文", "残る日報", source=str(root / "c.md"))
    have = {i.record.id: i for i in (inside, outside, stored(keep))}
    by_root = plan_ingest([keep], have, tenant="t", sync_roots=[root])
    assert [d.record.id for d in by_root.deletes] == ["a:本文"]
    everything = plan_ingest([keep], have, tenant="t", sync_all=True)
    assert {d.record.id for d in everything.deletes} == {"a:本文", "b:本文"}
    assert plan_ingest([keep], have, tenant="t").empty


def test_dedupe_skips_empty_texts_and_repeated_ids() -> None:
    a = rec("a:本文", "本文あり")
    recs, skipped = dedupe([a, rec("b:本文", "  \n"), rec("a:本文", "二度目")])
    assert recs == [a]
    assert [(s.id, s.reason) for s in skipped] == [
        ("b:本文", "本文が空です"),
        ("a:本文", "同じIDのレコードが先にあります"),
    ]
    plan = plan_ingest(recs, {}, tenant="t", skipped=skipped)
    assert plan.skipped == 2 and [r.action for r in plan.audit] == ["skip", "skip", "insert"]
