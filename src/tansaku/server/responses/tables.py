"""``/api/tables``, ``/api/sql`` and ``/api/stats/{kind}`` (the results of ``tansaku.tables``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class TableColumn(BaseModel):
    name: str
    type: str


class TableInfo(BaseModel):
    name: str
    rows: int
    columns: list[TableColumn]
    tools: list[str] = Field(description="このテーブルを使うツール")
    description: str | None


class TableList(BaseModel):
    tables: list[TableInfo]


class SqlResult(BaseModel):
    """SELECT の結果の行(列名 → 値)。0 行なら message、大きすぎて省略したら truncated と notice。"""

    results: list[dict[str, Any]]
    count: int
    message: str | None = None
    truncated: bool | None = None
    notice: str | None = None


class StatsPeriod(BaseModel):
    start_date: str
    end_date: str
    days: int


class StatsResult(BaseModel):
    """日報の集計。claims・sales・cash は period, store, summary と日ごとの内訳(期間に日報が
    なければ message)、compare は metric と current_period・previous_period・comparison。"""

    store: str
    period: StatsPeriod | None = None
    summary: dict[str, Any] | None = None
    message: str | None = None
    metric: str | None = None
    current_period: dict[str, Any] | None = None
    previous_period: dict[str, Any] | None = None
    comparison: dict[str, Any] | None = None


class TableReloaded(BaseModel):
    name: str
    reloaded: bool
    rows: int | None
    error: str | None = Field(description="読めなかった理由(前の内容のまま使う)")


class TablesReloaded(BaseModel):
    """読み込み直したテーブル(失敗したときは 422 reload_failed、error.tables に同じ内訳)。"""

    ok: bool
    tables: list[TableReloaded]


class InferredColumn(BaseModel):
    name: str = Field(description="SQL での列名")
    header: str = Field(description="ファイルの列名")
    type: str = Field(description="TEXT / INTEGER / DOUBLE / BOOLEAN / DATE / TIMESTAMP / JSON")
    description: str
    example: str


class TableInferred(BaseModel):
    """CSV から推定した表の設定(直してから登録する)。"""

    name: str
    rows: int
    description: str
    columns: list[InferredColumn]
    types: list[str] = Field(description="選べる型")


class RegisteredColumn(BaseModel):
    name: str
    type: str


class TableRegistered(BaseModel):
    table: str
    rows: int
    columns: list[RegisteredColumn]
    tool: str = Field(description="この表だけを読む SQL ツールの名前")
