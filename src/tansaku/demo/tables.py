"""Register the bundled example tables (stores, events, generated daily reports) in a workspace."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

from tansaku.demo.days import REFERENCE_NOW, demo_today, recorded_today
from tansaku.demo.reports import generate, write_daily_reports_csv
from tansaku.errors import ConfigError
from tansaku.tables.config_toml import write_tables_config
from tansaku.tables.registry import TablesConfig, load_tables_config
from tansaku.workspace import Workspace

DEMO_CONFIG = "tables.toml"
DAILY_REPORTS = "daily_reports.csv"


def examples_dir() -> Path:
    """``examples/tables``: inside the wheel (``tansaku/_examples``) or in a source checkout."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_examples" / "tables", package.parents[1] / "examples" / "tables"):
        if (candidate / DEMO_CONFIG).is_file():
            return candidate
    raise ConfigError(
        "同梱のサンプルテーブル(examples/tables)が見つかりません。インストールを確認してください"
    )


def demo_tables_config() -> TablesConfig:
    """The example registry, with paths in the examples folder (daily_reports is generated)."""
    return load_tables_config(examples_dir() / DEMO_CONFIG)


def demo_tables_day(home: Path, now: datetime | date | None = None) -> date:
    """The day the demo's ``daily_reports`` is generated for: the day of ``now`` if given, else
    the day the demo in ``home`` was built for (``tansaku demo``, so the table and the
    ``reports`` collection hold the same dates), else the reference day 2025-12-11 (the data the
    table docs quote)."""
    if now is not None:
        return demo_today(now)
    return recorded_today(home) or demo_today(REFERENCE_NOW)


def install_demo_tables(home: Path, *, now: datetime | date | None = None) -> list[str]:
    """Copy the example tables and a generated ``daily_reports.csv`` (for
    :func:`demo_tables_day`) into ``<home>/tables/`` and register them in ``<home>/tables.toml``.
    Idempotent; other tables already registered there are kept. Returns the demo table names."""
    ws = Workspace.from_env(home)
    day = demo_tables_day(ws.home, now)
    ws.tables_dir.mkdir(parents=True, exist_ok=True)
    demo = demo_tables_config()
    tables = []
    for table in demo.tables:
        target = ws.tables_dir / table.path.name
        if table.path.name == DAILY_REPORTS:
            write_daily_reports_csv(generate(day).daily_reports, target)
        else:
            shutil.copyfile(table.path, target)
        tables.append(replace(table, path=target))
    demo = replace(demo, tables=tuple(tables))
    if ws.tables_file.is_file():
        demo = load_tables_config(ws.tables_file).merged(demo)  # keeps the user's [sandbox]
    write_tables_config(demo, ws.tables_file)
    return [t.name for t in tables]
