"""Domain errors. Front ends translate them (exit code, HTTP status, tool JSON).

Messages are Japanese because users read them; each says what went wrong and what to do next.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path


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


class InvalidRequest(TansakuError, ValueError):
    """A search request (query, options, filters) is invalid: the caller's mistake, never the
    data's. The CLI exits with 2, an HTTP front end answers 400. A ``ValueError`` too, so code
    that caught the ``ValueError`` of earlier versions still does."""


class QueryTooLong(InvalidRequest):
    """The query has more characters than the request's ``max_query_chars``."""

    def __init__(self, length: int, limit: int) -> None:
        self.length = length
        self.limit = limit
        super().__init__(
            f"検索クエリが長すぎます({length:,}文字、上限 {limit:,}文字)。"
            "要点を短くまとめて検索してください"
        )


class UnknownName(InvalidRequest):
    """A filter names a record field or a metadata key that no record of the team has;
    ``available`` lists the ones that exist (for metadata keys: those seen in a sample)."""

    def __init__(self, kind: str, name: str, available: list[str], where: str) -> None:
        self.kind = kind
        self.name = name
        self.available = available
        hint = f"使える{kind}: {', '.join(available)}" if available else f"{kind}がありません"
        super().__init__(f"{kind}「{name}」を持つ記録が{where}にありません。{hint}")


class EmbedderMismatch(TansakuError):
    """A collection's dense vectors come from one embedding model and a search or an ingest
    would use another (``tansaku.collection.guard``): vectors of two models cannot be compared.
    ``recorded``/``recorded_dim``: the collection's model; ``used``/``used_dim``: the other."""

    def __init__(
        self,
        collection: str,
        *,
        recorded: str,
        recorded_dim: int,
        used: str,
        used_dim: int | None,
        action: str,
    ) -> None:
        self.collection = collection
        self.recorded = recorded
        self.recorded_dim = recorded_dim
        self.used = used
        self.used_dim = used_dim
        self.action = action
        have = f"「{recorded}」({recorded_dim}次元)" if recorded_dim else f"「{recorded}」"
        want = f"「{used}」({used_dim}次元)" if used_dim else f"「{used}」"
        super().__init__(
            f"コレクション「{collection}」は埋め込みモデル{have}で作られていますが、"
            f"この{action}はモデル{want}を使おうとしています(別のモデルのベクトルは比べられません)。"
            f"`tansaku reembed {collection}` で今のモデルに埋め込み直すか、"
            f"設定([embedder] / TANSAKU_EMBED*)をモデル「{recorded}」に戻してください"
        )


_ABSOLUTE_PATH = re.compile(
    r"(?<![\w.:/\\])(?:/(?!api/)[^\s/'\"`「」()<>]+(?:/[^\s/'\"`「」()<>]*)+"
    r"|[A-Za-z]:\\[^\s'\"`「」()<>]+)"
)


def public_message(message: str, *, home: str | os.PathLike[str] | None = None) -> str:
    """``message`` as a client may see it: no absolute path of the machine that serves it.

    A path inside the workspace ``home`` is shown relative to it (``collections/manuals/…``);
    any other absolute path (POSIX or Windows) by its last part (``…/segment.json``). Server
    routes and the MCP server pass every error message they send through it."""
    text = str(message)
    if home is not None:
        for root in {str(home), str(Path(home).resolve())}:
            if len(root) > 1:
                text = text.replace(root.rstrip("/\\") + os.sep, "").replace(root, ".")

    def shorten(match: re.Match[str]) -> str:
        last = re.split(r"[/\\]", match.group(0).rstrip("/\\"))[-1]
        return f"…/{last}" if last else "…"

    return _ABSOLUTE_PATH.sub(shorten, text)


def http_status_cause(status: int, detail: str = "", hints: Mapping[int, str] | None = None) -> str:
    """The Japanese cause of an HTTP error ``status`` from a remote service (an embedding or
    rerank server), with the server's ``detail`` (at most 200 characters) when it gave one;
    ``hints`` words the statuses whose remedy depends on the service (404, 413, 429 …)."""
    if hints and status in hints:
        cause = hints[status]
    elif status in (401, 403):
        cause = f"認証に失敗しました(HTTP {status})。APIキーを確認してください"
    elif status >= 500:
        cause = f"サーバーエラーです(HTTP {status})"
    else:
        cause = f"リクエストが拒否されました(HTTP {status})"
    return f"{cause}: {detail[:200]}" if detail else cause


def check_keywords(func: str, given: Mapping[str, object], allowed: type) -> None:
    """Raise ``TypeError`` as Python does for a keyword ``allowed`` (a ``TypedDict`` taken as
    ``**kwargs: Unpack[...]``) does not declare: a misspelt option fails instead of being
    ignored."""
    known = allowed.__required_keys__ | allowed.__optional_keys__  # type: ignore[attr-defined]
    for key in given:
        if key not in known:
            raise TypeError(f"{func}() got an unexpected keyword argument {key!r}")
