"""The demo workspace: four collections and three tables built from ``examples/``.

Building is idempotent: the daily reports are generated from a fixed seed, every source is
ingested with ``sync``, so a second build embeds nothing and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tansaku.client import Tansaku
from tansaku.demo.paths import examples_dir
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.ingest.pipeline import IngestReport, ProgressFn


@dataclass(frozen=True)
class DemoCollection:
    name: str
    config: str  # file name under examples/configs
    source: Callable[[Path, Path], Path]  # (examples dir, workspace home) -> path to ingest


def _reports(_: Path, home: Path) -> Path:
    return write_reports_jsonl(generate(), home / "demo" / "reports.jsonl")


DEMO_COLLECTIONS: tuple[DemoCollection, ...] = (
    DemoCollection("reports", "reports.toml", _reports),
    DemoCollection("manuals", "manuals.toml", lambda ex, _: ex / "manuals"),
    DemoCollection("notes", "notes.toml", lambda ex, _: ex / "notes"),
    DemoCollection("cards", "cards.toml", lambda ex, _: ex / "cards" / "cards.jsonl"),
)


@dataclass(frozen=True)
class SampleQuery:
    collection: str
    query: str
    why: str


SAMPLE_QUERIES: tuple[SampleQuery, ...] = (
    SampleQuery("reports", "料理の温度が低いというクレーム", "日報からクレームを探す"),
    SampleQuery("reports", "冷蔵庫が壊れた", "言い換え(故障)をベクトル検索が拾う"),
    SampleQuery("manuals", "食中毒を防ぐための3原則", "マニュアルの該当章"),
    SampleQuery("notes", "TEOS を使ったシリカ薄膜の作り方", "材料(BM25)と方法(ベクトル)の両軸"),
    SampleQuery("cards", "相手のリーダーにダメージを与えるカード", "以前は0件だった効果検索"),
    SampleQuery("notes", "SA-1021", "型番・品番はそのまま一語として扱う"),
)


def build_demo(
    ts: Tansaku,
    *,
    progress: ProgressFn | None = None,
    on_collection: Callable[[str, IngestReport], None] | None = None,
) -> dict[str, IngestReport]:
    """Build (or bring up to date) the demo collections and tables in ``ts``'s workspace."""
    ex = examples_dir()
    home = ts.workspace.home
    reports: dict[str, IngestReport] = {}
    for demo in DEMO_COLLECTIONS:
        report = ts.ingest(
            [demo.source(ex, home)],
            collection=demo.name,
            config=ex / "configs" / demo.config,
            sync=True,
            progress=progress,
        )
        reports[demo.name] = report
        if on_collection is not None:
            on_collection(demo.name, report)
    return reports


def install_tables(home: Path) -> list[str]:
    """Register the demo tables when the ``tables`` extra is installed; else return []."""
    try:
        from tansaku.tables import install_demo_tables

        return install_demo_tables(home)
    except ImportError:
        return []
