"""``/api/collections``: listings, a new collection, a deletion, a config, a page of records."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class CollectionSummary(BaseModel):
    """コレクションの概要。records は呼び出したチーム自身の記録数。"""

    name: str
    description: str
    source_type: str
    records: int
    axes: list[str] = Field(description="検索軸(「名前(モード)」)")


class CollectionList(BaseModel):
    collections: list[CollectionSummary]


class CollectionDeleted(BaseModel):
    deleted: str
    collection_removed: bool = Field(
        description="ほかのチームの記録が残らず、コレクションごと削除したとき true"
    )


class CollectionConfig(BaseModel):
    name: str
    config: dict[str, Any] = Field(description="TOML 設定のキーを JSON で")


class RecordItem(BaseModel):
    id: str
    doc_id: str
    field: str
    text: str
    metadata: dict[str, Any]
    score: float | None = Field(default=None, description="q で検索したときの関連度")


class RecordPage(BaseModel):
    """チームの記録の1ページ(id 順、q を指定したときは関連度順)。"""

    collection: str
    offset: int
    limit: int
    total: int
    query_id: str | None = Field(default=None, description="q で検索したときの検索の id")
    records: list[RecordItem]


class MergedRecords(BaseModel):
    inserted: int
    updated: int
    unchanged: int
    deleted: int


class CollectionMerged(BaseModel):
    """統合の結果(呼び出したチームの記録だけ)。"""

    into: str
    sources: list[str]
    conflict: str = Field(description="skip: 統合先の文書を残す / overwrite: 統合元で置き換える")
    created: bool = Field(description="統合先を新しく作成したとき true")
    documents: int = Field(description="統合元から取り込んだ文書数(置き換えを含む)")
    replaced: int = Field(description="そのうち統合先の文書を置き換えた数")
    skipped: int = Field(description="重複の扱いで除外した文書数")
    records: MergedRecords
    embedded: int = Field(description="埋め込みモデルに通した文の数(ベクトルを再利用できれば 0)")
    teams: dict[str, int]
    warnings: list[str]


class TeamReset(BaseModel):
    """チームの記録を削除した結果。"""

    team: str
    collections: dict[str, int] = Field(description="コレクションごとに削除した記録数")
    records: int
    removed: list[str] = Field(description="記録がなくなり、コレクションごと削除したもの")
