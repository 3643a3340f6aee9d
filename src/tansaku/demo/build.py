"""The demo workspace: four collections and three tables built from ``examples/``.

The daily reports are generated relative to the day the demo is built for (``now``, default
the current Asia/Tokyo time; ``tansaku.demo.days``), so 「昨日のクレーム」 answers on that day.
Building is idempotent: the same day gives the same data and every source is ingested with
``sync``, so a second build on the same day embeds nothing and changes nothing. A build on a
later day moves the window: the new days are added, the days that left the window removed,
and the scripted facts move to the new 昨日/先週/先月; every other record stays as it was
(a day's reports do not depend on the window), so only those records are embedded. The day is
recorded in ``<home>/demo/demo.json`` (the tables and the CLI's hints read it).

The reports collection mirrors its generated file exactly — every other report of the team is
removed, whatever source path it was recorded under: that file lives in the workspace, so in a
moved or copied workspace a source-path sync would keep the reports of the day it was first
built for beside the new day's (a search then found reports dated after "now").
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from tansaku.client import Tansaku
from tansaku.config import CollectionConfig, load_config
from tansaku.demo.days import demo_today, demo_window, write_record
from tansaku.demo.paths import examples_dir
from tansaku.demo.reports import DEFAULT_SEED, generate, write_reports_jsonl
from tansaku.errors import TansakuError
from tansaku.ingest.loaders import load_file
from tansaku.ingest.pipeline import IngestReport, ProgressFn
from tansaku.ingest.sources import iter_source_files
from tansaku.records import Record


@dataclass(frozen=True)
class DemoCollection:
    name: str
    config: str  # file name under examples/configs
    # (examples dir, workspace home, demo day) -> path to ingest
    source: Callable[[Path, Path, date], Path]
    mirror: bool = False
    """The collection holds exactly what the source produced (generated data in the workspace);
    else a sync by source path (the bundled examples)."""


def _reports(_: Path, home: Path, today: date) -> Path:
    return write_reports_jsonl(generate(today), home / "demo" / "reports.jsonl")


DEMO_COLLECTIONS: tuple[DemoCollection, ...] = (
    DemoCollection("reports", "reports.toml", _reports, mirror=True),
    DemoCollection("manuals", "manuals.toml", lambda ex, _, __: ex / "manuals"),
    DemoCollection("notes", "notes.toml", lambda ex, _, __: ex / "notes"),
    DemoCollection("cards", "cards.toml", lambda ex, _, __: ex / "cards" / "cards.jsonl"),
)


@dataclass(frozen=True)
class SampleQuery:
    collection: str
    query: str
    why: str


SAMPLE_QUERIES: tuple[SampleQuery, ...] = (
    SampleQuery("reports", "昨日のクレーム", "相対日付: 「昨日」を日付の絞り込みにして日報を探す"),
    SampleQuery("reports", "先週の冷蔵庫のトラブル", "先週(月〜日)に絞り、故障・不具合も拾う"),
    SampleQuery("reports", "冷蔵庫が壊れた", "言い換え(故障)をベクトル検索が拾う"),
    SampleQuery("manuals", "食中毒を防ぐための3原則", "マニュアルの該当章"),
    SampleQuery("notes", "TEOS を使ったシリカ薄膜の作り方", "材料(BM25)と方法(ベクトル)の両軸"),
    SampleQuery("cards", "相手のリーダーにダメージを与えるカード", "以前は0件だった効果検索"),
    SampleQuery("notes", "SA-1021", "型番・品番はそのまま一語として扱う"),
)


@dataclass(frozen=True)
class Hint:
    """A command the demo suggests at the end; ``args`` run as ``tansaku *args``."""

    args: tuple[str, ...]
    why: str

    @property
    def command(self) -> str:
        """The command line, Japanese arguments in double quotes as in the README."""
        return " ".join(_quote(arg) for arg in ("tansaku", *self.args))


def _quote(arg: str) -> str:
    if arg.isascii() or any(c in arg for c in '"$`\\!'):
        return shlex.quote(arg)
    return f'"{arg}"'


def demo_hints(
    today: date,
    *,
    current: date | None = None,
    home: Path | None = None,
    tables: bool = True,
) -> tuple[Hint, ...]:
    """The example commands shown after the sample searches, for a demo built for ``today``.

    Relative expressions (昨日, 先週) stay relative; ``--now`` is added only when the demo was
    built for another day than ``current`` (default: today in Tokyo). ``--home`` is added when
    given. The stats hint asks for last month (``--period 先月``).
    """
    current = demo_today() if current is None else current
    now = ("--now", today.isoformat()) if today != current else ()
    where = ("--home", str(home)) if home is not None else ()
    hints = [
        Hint(("search", "昨日のクレーム", "-c", "reports", *now, *where), "昨日の日報のクレーム"),
        Hint(
            ("search", "先週の冷蔵庫のトラブル", "-c", "reports", *now, *where),
            "先週(月〜日)の冷蔵庫の故障・不具合",
        ),
    ]
    if tables:
        hints.append(
            Hint(
                ("stats", "claims", "--period", "先月", *now, *where),
                "先月のクレーム件数・発生率(表 daily_reports の集計)",
            )
        )
    return tuple(hints)


def build_demo(
    ts: Tansaku,
    *,
    now: datetime | date | None = None,
    progress: ProgressFn | None = None,
    on_collection: Callable[[str, IngestReport], None] | None = None,
) -> dict[str, IngestReport]:
    """Build (or bring up to date) the demo collections in ``ts``'s workspace for the day of
    ``now`` (default: the current Asia/Tokyo time) and record that day."""
    ex = examples_dir()
    home = ts.workspace.home
    window = demo_window(now)
    reports: dict[str, IngestReport] = {}
    for demo in DEMO_COLLECTIONS:
        source, config = demo.source(ex, home, window.today), ex / "configs" / demo.config
        if demo.mirror:
            cfg = load_config(config, name=demo.name)
            report = ts.ingest_records(
                _records(source, cfg),
                collection=demo.name,
                config=cfg,
                sync=True,
                progress=progress,
            )
        else:
            report = ts.ingest(
                [source], collection=demo.name, config=config, sync=True, progress=progress
            )
        reports[demo.name] = report
        if on_collection is not None:
            on_collection(demo.name, report)
    write_record(home, window, DEFAULT_SEED)
    return reports


def _records(source: Path, config: CollectionConfig) -> list[Record]:
    """The records of a generated demo file, read by the collection's loaders."""
    records: list[Record] = []
    for src in iter_source_files([source]):
        result = load_file(src, config)
        if result.errors:
            raise TansakuError(f"デモのデータを読めません: {result.errors[0].reason}")
        records.extend(result.records)
    return records


def install_tables(home: Path, *, now: datetime | date | None = None) -> list[str]:
    """Register the demo tables (daily reports for the day of ``now``, default the day recorded
    by :func:`build_demo`) when the ``tables`` extra is installed; else return []."""
    try:
        from tansaku.demo.tables import install_demo_tables

        return install_demo_tables(home, now=now)
    except ImportError:
        return []
