"""Bulk ingest in one process: the same result as a plain ingest, batch by batch, with bounded
look-ahead, progress with rates, streamed JSON Lines, and an embedding server that goes down."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from bulk_support import report_text, snapshot, write_jsonl, write_texts

import tansaku
from tansaku.embed import EmbeddingError, OpenAIEmbedder, RemoteOptions
from tansaku.ingest.bulk import BulkOptions, BulkProgress, bulk_ingest, bulk_ingest_records
from tansaku.ingest.progress import Meter
from tansaku.records import Record
from tansaku.testing import HashEmbedder
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault

SMALL = BulkOptions(batch_records=32, inflight=2, stream_bytes=2_000)


def corpus(root: Path, *, variant: int = 0, files: int = 30, lines: int = 400) -> Path:
    write_texts(root / "reports", files, variant=variant)
    write_jsonl(root / "exports" / "daily.jsonl", lines, variant=variant)
    return root


def plain(tmp: Path, src: Path) -> dict:
    with tansaku.connect(tmp / "plain", embedder=HashEmbedder(32)) as ts:
        ts.ingest([src], collection="reports")
        return snapshot(ts, "reports")


def test_a_bulk_ingest_stores_what_a_plain_ingest_stores(tmp_path: Path) -> None:
    src = corpus(tmp_path / "src")
    emb = HashEmbedder(32)
    with tansaku.connect(tmp_path / "bulk", embedder=emb) as ts:
        report = bulk_ingest(ts, [src], collection="reports", options=SMALL)
        got = snapshot(ts, "reports")
        texts = {
            r.record.text for r in ts.collection("reports").store.scan("default", with_text=True)
        }
        hits = ts.search("冷蔵庫の温度が上がらない", collection="reports", top_k=3).hits
    assert report.failed == ()
    assert report.inserted == len(got["hashes"]) > 430  # long reports make several chunks
    # each distinct text once (the long reports share their last chunks); - 1: the query
    assert report.embedded == len(texts) == emb.texts_embedded - 1
    assert got == plain(tmp_path, src)
    assert "冷蔵庫" in hits[0].record.text


def test_a_second_run_writes_nothing_and_embeds_nothing(tmp_path: Path) -> None:
    src = corpus(tmp_path / "src", files=5, lines=100)
    emb = HashEmbedder(32)
    with tansaku.connect(tmp_path / "ws", embedder=emb) as ts:
        bulk_ingest(ts, [src], collection="reports", options=SMALL)
        gen = ts.collection("reports").gen
        calls = emb.calls
        again = bulk_ingest(ts, [src], collection="reports", options=SMALL)
        assert ts.collection("reports").gen == gen  # nothing committed
    assert (again.inserted, again.updated, again.deleted, again.embedded) == (0, 0, 0, 0)
    assert again.unchanged == snapshot_count(tmp_path / "ws")
    assert emb.calls == calls


def snapshot_count(home: Path) -> int:
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        return len(snapshot(ts, "reports")["hashes"])


def test_changes_and_sync_end_like_a_clean_ingest_of_the_new_version(tmp_path: Path) -> None:
    src = corpus(tmp_path / "src")
    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32)) as ts:
        bulk_ingest(ts, [src], collection="reports", options=SMALL)
        corpus(src, variant=3)  # every 4th line and every report changed
        for i in range(0, 30, 7):
            (src / "reports" / f"report-{i:04d}.txt").unlink()  # gone: --sync deletes them
        write_jsonl(src / "exports" / "daily.jsonl", 350, variant=3)  # 50 objects gone
        report = bulk_ingest(ts, [src], collection="reports", sync=True, options=SMALL)
        got = snapshot(ts, "reports")
    assert report.updated > 100 and report.deleted >= 5 + 50
    assert got == plain(tmp_path, src)


def test_a_record_id_repeated_in_a_later_batch_keeps_the_first(tmp_path: Path) -> None:
    def records() -> Iterator[Record]:
        for i in range(100):
            yield Record(id=f"D{i}:body", doc_id=f"D{i}", field="body", text=report_text(i))
        yield Record(id="D3:body", doc_id="D3", field="body", text="後から来た同じIDの本文")

    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32)) as ts:
        report = bulk_ingest_records(ts, records(), collection="reports", options=SMALL)
        stored = ts.collection("reports").store.get("default", ["D3:body"])
    assert (report.inserted, report.skipped) == (100, 1)
    assert stored[0].text == report_text(3)


def test_the_loader_runs_only_a_few_batches_ahead_of_the_writer(tmp_path: Path) -> None:
    pulled = 0
    ahead: list[int] = []

    def records() -> Iterator[Record]:
        nonlocal pulled
        for i in range(3_000):
            pulled += 1
            yield Record(id=f"D{i}:body", doc_id=f"D{i}", field="body", text=report_text(i))

    def watch(p: BulkProgress) -> None:
        ahead.append(pulled - p.chunks)

    opts = BulkOptions(batch_records=50, inflight=2)
    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32)) as ts:
        report = bulk_ingest_records(
            ts, records(), collection="reports", on_progress=watch, options=opts
        )
    assert report.inserted == 3_000
    # queued (2) + planned and embedding (2) + the one being cut + the one just written
    assert max(ahead) <= (2 * 2 + 2) * 50
    assert len(ahead) >= 3_000 // 50


def test_progress_has_rates_and_the_time_left_over_the_source_bytes(tmp_path: Path) -> None:
    src = corpus(tmp_path / "src", files=10, lines=300)
    seen: list[BulkProgress] = []
    stages: dict[str, list[tuple[int, int]]] = {}
    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32)) as ts:
        report = bulk_ingest(
            ts,
            [src],
            collection="reports",
            on_progress=seen.append,
            progress=lambda s, d, t: stages.setdefault(s, []).append((d, t)),
            options=SMALL,
        )
    last = seen[-1]
    total = sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
    assert (last.stage, last.bytes_done, last.bytes_total, last.eta_s) == ("done", total, total, 0)
    assert last.files_done == last.files_total == 11
    assert last.chunks == report.inserted and last.documents == 310
    assert [p.bytes_done for p in seen] == sorted(p.bytes_done for p in seen)
    assert any(p.eta_s and p.eta_s > 0 for p in seen[:-1])
    assert any(p.chunks_per_s > 0 for p in seen)
    assert stages["load"][-1] == (11, 11)
    assert stages["write"][-1] == (report.inserted, report.inserted)
    assert seen[-1].to_dict()["bytes_total"] == total


def test_the_meter_rates_and_time_left_by_hand() -> None:
    now = [100.0]
    meter = Meter(window=10.0, clock=lambda: now[0])
    first = meter.report(stage="write", bytes_done=0, bytes_total=1_000, documents=0, chunks=0)
    assert first.eta_s is None and first.chunks_per_s == 0
    now[0] = 104.0
    p = meter.report(stage="write", bytes_done=200, bytes_total=1_000, documents=40, chunks=80)
    assert (p.docs_per_s, p.chunks_per_s, p.eta_s) == (10.0, 20.0, 16.0)  # 800 B at 50 B/s
    now[0] = 120.0  # the window drops the samples older than 10 s but one
    p = meter.report(stage="write", bytes_done=300, bytes_total=1_000, documents=50, chunks=100)
    assert p.chunks_per_s == pytest.approx(20 / 16) and p.eta_s == pytest.approx(700 / (100 / 16))
    assert p.elapsed_s == 20.0 and p.fraction == 0.3


def test_bad_lines_of_a_streamed_jsonl_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "src" / "daily.jsonl", 60)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[4] = '{"id": "R000004", "body": 壊れた行'
    lines[9] = '{"id": "R000009", "body": "' + "長い本文。" * 400 + '"}'
    lines[14] = '{"id": "R000014", "count": 3}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cfg = tansaku.config.CollectionConfig(name="reports", ingest={"max_file_mb": 0.002})
    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32)) as ts:
        report = bulk_ingest(ts, [path], collection="reports", config=cfg, options=SMALL)
    failed = {f.path.rsplit(":", 1)[1]: f.reason for f in report.failed}
    assert set(failed) == {"5", "10", "15"}
    assert failed["5"].startswith("5行目のJSONが不正です")
    assert failed["10"].startswith("10行目が大きすぎます(上限は 2,000 バイト)")
    assert "15行目に検索できるテキストがありません" in failed["15"]
    assert report.inserted == 57


def test_an_embedding_server_that_goes_down_keeps_what_was_written(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "src" / "daily.jsonl", 400)
    opts = RemoteOptions(batch_size=16, concurrency=2, max_retries=0, backoff_s=0.01)
    with FakeEmbeddingServer(dim=32) as srv:
        emb = OpenAIEmbedder(base_url=f"{srv.url}/v1", model="fake-ja", dim=32, options=opts)
        srv.fail_next(*[Fault()] * 10, *[Fault(status=503)] * 200)
        with tansaku.connect(tmp_path / "ws", embedder=emb) as ts:
            with pytest.raises(EmbeddingError, match="HTTP 503"):
                bulk_ingest(ts, [src], collection="reports", options=SMALL)
            kept = ts.collection("reports").store.count("default")
            cached = cache_rows(tmp_path / "ws")
            assert 0 < kept <= cached < 400  # the batches written before were committed
            srv.reset()
            sent = srv.texts_embedded
            report = bulk_ingest(ts, [src], collection="reports", options=SMALL)
            assert report.inserted == 400 - kept and report.unchanged == kept
            assert report.embedded == srv.texts_embedded - sent == 400 - cached
            assert ts.collection("reports").store.count("default") == 400


def cache_rows(home: Path) -> int:
    with sqlite3.connect(home / "cache" / "embeddings.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])
