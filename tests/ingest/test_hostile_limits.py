"""The size cap per file and the chunk cap per document."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ingest_support import by_id, config, load, reasons, write

from tansaku.errors import ConfigError
from tansaku.ingest.chunking import chunk_text
from tansaku.ingest.loaders import load_file, reading
from tansaku.ingest.loaders.settings import IngestLimits, ingest_settings
from tansaku.ingest.sources import SourceFile

SENTENCE = "冷蔵庫の温度は毎朝開店前に確認し、記録表に記入してから仕込みを始めること。"  # 37


def _log(paragraphs: int) -> str:
    """A title line and ``paragraphs`` paragraphs of 37 characters each."""
    return "作業ログ\n\n" + "\n\n".join(f"{SENTENCE}" for _ in range(paragraphs)) + "\n"


def test_defaults() -> None:
    assert ingest_settings({}).limits == IngestLimits(
        max_file_bytes=50_000_000, max_chunks_per_document=5_000
    )


def test_limits_from_the_ingest_table() -> None:
    limits = ingest_settings({"max_file_mb": 0.5, "max_chunks_per_document": 20}).limits
    assert limits == IngestLimits(max_file_bytes=500_000, max_chunks_per_document=20)


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ({"max_file_mb": 0}, "[ingest] の max_file_mb は正の数で指定してください(現在: 0)"),
        ({"max_file_mb": "50MB"}, "max_file_mb は正の数"),
        ({"max_file_mb": True}, "max_file_mb は正の数"),
        ({"max_chunks_per_document": 1.5}, "max_chunks_per_document は正の整数"),
        ({"max_chunks_per_document": -1}, "max_chunks_per_document は正の整数"),
        ({"max_chunk": 10}, "不明なキー"),
    ],
)
def test_bad_limits_are_config_errors(table: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        ingest_settings(table)
    assert needle in str(info.value)


def test_file_over_size_cap_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = write(tmp_path / "ログ.txt", "あ" * 2_000)  # 6,000 bytes in UTF-8
    small = write(tmp_path / "メモ.md", "# メモ\n\n明日は棚卸し。\n")

    def never(path: Path) -> int:
        raise AssertionError(f"{path} was opened")

    monkeypatch.setattr(reading, "_open", never)  # over the cap: stat-ed, never opened
    result = load(big, config({"max_file_mb": 0.005}))
    assert result.records == ()
    assert reasons(result) == [
        "ファイルが大きすぎます(6,000 バイト。上限は 5,000 バイト)。"
        "読み込みません([ingest] max_file_mb で上限を変えられます)"
    ]
    monkeypatch.undo()
    assert reasons(load(big, config({"max_file_mb": 1}))) == []
    assert load(small, config({"max_file_mb": 0.005})).records


def test_size_cap_keyword_overrides_the_config(tmp_path: Path) -> None:
    path = write(tmp_path / "ログ.txt", "あ" * 2_000)
    (source,) = [SourceFile(path, tmp_path, "ログ")]
    (reason,) = reasons(load_file(source, config(), max_file_bytes=50_000_000 // 10_000))
    assert reason.startswith("ファイルが大きすぎます(6,000 バイト。上限は 5,000 バイト)")
    assert load_file(source, config({"max_file_mb": 0.001}), max_file_bytes=6_000).records


def test_file_that_reads_longer_than_its_size_stops_at_the_cap(tmp_path: Path) -> None:
    # /proc files are regular but say they are empty: what a file growing while it is read
    # looks like to the reader
    status = Path("/proc/self/status")
    if not status.is_file() or status.stat().st_size != 0:
        pytest.skip("needs Linux /proc")
    link = tmp_path / "status.txt"
    os.symlink(status, link)
    assert reading.read_capped(link, 10**6).startswith(b"Name:")
    with pytest.raises(reading.LoadFailure) as info:
        reading.read_capped(link, 50)
    assert info.value.reason == (
        "読み込み中にファイルが上限(50 バイト)を超えて大きくなりました。読み込みません"
    )
    source = SourceFile(link, tmp_path, "status")
    assert reasons(load_file(source, config(), max_file_bytes=50)) == [info.value.reason]


def test_a_file_exactly_at_the_cap_loads(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "題名\n\n本文です。")
    size = path.stat().st_size
    assert load_file(SourceFile(path, tmp_path, "a"), config(), max_file_bytes=size).records


def test_chunk_cap_per_file(tmp_path: Path) -> None:
    cfg = config({"max_chunks_per_document": 10}, chunk_size=50, chunk_overlap=0)
    body = _log(12).split("\n\n", 1)[1]
    assert len(chunk_text(body, 50, 0)) == 12  # one 37-character paragraph per chunk
    big = load(write(tmp_path / "作業ログ.txt", _log(12)), cfg)
    assert big.records == ()
    assert reasons(big) == [
        "チャンク数(12)が上限(10)を超えるため、このファイルは読み込みません"
        "([ingest] max_chunks_per_document で上限を変えられます)"
    ]
    assert big.errors[0].path == str(tmp_path / "作業ログ.txt")
    at_cap = load(write(tmp_path / "短いログ.txt", _log(10)), cfg)
    assert len(at_cap.records) == 10 and at_cap.errors == ()


def test_chunk_cap_keyword_overrides_the_config(tmp_path: Path) -> None:
    path = write(tmp_path / "作業ログ.txt", _log(12))
    source = SourceFile(path, tmp_path, "作業ログ")
    cfg = config({"max_chunks_per_document": 10}, chunk_size=50, chunk_overlap=0)
    assert len(load_file(source, cfg, max_chunks_per_document=12).records) == 12
    assert load_file(source, cfg, max_chunks_per_document=11).records == ()


def test_chunk_cap_counts_every_field_of_a_document(tmp_path: Path) -> None:
    # purpose (1 chunk) + method (2) + the whole field repeating them (3): 6 for one document
    note = "# 実験\n\n## 目的\n" + SENTENCE + "\n\n## 方法\n" + SENTENCE + "\n\n" + SENTENCE + "\n"
    cfg = {"markdown": {"fields": {"purpose": ["目的"], "method": ["方法"]}}}
    path = write(tmp_path / "note.md", note)
    loaded = load(
        path, config({**cfg, "max_chunks_per_document": 10}, chunk_size=50, chunk_overlap=0)
    )
    count = len(loaded.records)
    assert count == 6 and loaded.errors == ()
    capped = load(
        path, config({**cfg, "max_chunks_per_document": count - 1}, chunk_size=50, chunk_overlap=0)
    )
    assert capped.records == ()
    assert reasons(capped)[0].startswith(f"チャンク数({count})が上限({count - 1})を超える")


def test_chunk_cap_is_per_row_in_a_table(tmp_path: Path) -> None:
    rows = "\n".join(f"S{i:03d},店舗{i},駅前の店。" for i in range(1, 31))
    long_row = "S999,巨大な店," + "".join(SENTENCE for _ in range(6))
    path = write(tmp_path / "stores.csv", "store_id,name,description\n" + rows + "\n" + long_row)
    result = load(path, config({"max_chunks_per_document": 3}, chunk_size=50, chunk_overlap=0))
    assert len({r.doc_id for r in result.records}) == 30  # 30 rows > the cap: rows count alone
    assert "S999" not in {r.doc_id for r in result.records}
    (reason,) = reasons(result)
    assert reason.startswith("文書「S999」のチャンク数(")
    assert "上限(3)を超えるため、この文書は読み込みません" in reason
    assert by_id(result)["S001:body"].text == "name: 店舗1\ndescription: 駅前の店。"
