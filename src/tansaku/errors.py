"""Domain errors. Front ends translate them (exit code, HTTP status, tool JSON).

Messages are Japanese because users read them; each says what went wrong and what to do next.
"""

from __future__ import annotations


class TansakuError(Exception):
    """Base class of every error tansaku raises on purpose."""


class ConfigError(TansakuError):
    """A collection or workspace configuration is invalid."""


class CollectionNotFound(TansakuError):
    """The named collection does not exist in the workspace."""

    def __init__(self, name: str, available: list[str] | None = None) -> None:
        self.name = name
        self.available = available or []
        hint = (
            f"既存のコレクション: {', '.join(self.available)}"
            if self.available
            else "まだコレクションがありません。"
            "`tansaku ingest PATH --collection 名前` で作成してください"
        )
        super().__init__(f"コレクション「{name}」が見つかりません。{hint}")


class CollectionBusy(TansakuError):
    """Another process is writing the collection and did not finish within the wait."""


class WorkspaceNotFound(TansakuError):
    """A read command named a workspace folder that does not exist (nothing is created)."""

    def __init__(self, home: str) -> None:
        self.home = home
        super().__init__(
            f"ワークスペース {home} がありません。--home か TANSAKU_HOME の指定を確かめるか、"
            "`tansaku ingest` で作成してください"
        )


class StorageError(TansakuError):
    """The data of a collection on disk is missing or damaged (``tansaku doctor`` explains)."""


class LoadError(TansakuError):
    """A source file could not be read or parsed. ``path`` and ``reason`` go to the report."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class MissingExtra(TansakuError, ImportError):
    """An optional dependency is not installed; the message names the pip command."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose}には {package} が必要です。"
            f"`pip install 'tansaku[{extra}]'` でインストールしてください"
        )
