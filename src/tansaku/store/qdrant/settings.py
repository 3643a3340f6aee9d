"""Where a Qdrant server is and how tansaku lays collections out on it.

Read from the workspace's ``tansaku.toml`` (``[qdrant]``: ``url``, ``prefix``, ``shard_number``,
``replication_factor``, ``write_consistency_factor``, ``on_disk``, ``timeout_s``) and the
environment (``TANSAKU_QDRANT_URL``, ``TANSAKU_QDRANT_API_KEY``). The API key is never read from
the file: a file is copied, committed and shared, a key must not be.

URLs: ``http(s)://host:6333`` is a server; ``qdrant+local:///abs/path`` is qdrant-client's local
mode persisted in that folder (one client per folder and process: it locks the folder);
``qdrant+memory://`` (optionally ``qdrant+memory://name``) is local mode in memory. Local-mode
clients are shared per URL within a process, so several opens see the same data.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlparse

from tansaku.errors import ConfigError, MissingExtra

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

ENV_URL = "TANSAKU_QDRANT_URL"
ENV_API_KEY = "TANSAKU_QDRANT_API_KEY"
SERVER_SCHEMES = ("http", "https")
LOCAL_SCHEME = "qdrant+local"
MEMORY_SCHEME = "qdrant+memory"
SCHEMES = (*SERVER_SCHEMES, LOCAL_SCHEME, MEMORY_SCHEME)
_KEYS = (
    "url",
    "prefix",
    "shard_number",
    "replication_factor",
    "write_consistency_factor",
    "on_disk",
    "quantization",
    "timeout_s",
)
RESERVED = "meta"  # {prefix}meta: the registry of collections (tansaku.backends.qdrant.registry)
SEPARATOR = "__"  # before a suffix: {prefix}{name}__units
QUANTIZATIONS = (None, "int8")
_PREFIX = re.compile(r"[A-Za-z0-9_-]{0,64}")
_shared: dict[str, QdrantClient] = {}  # local-mode clients by URL (one per folder and process)
_shared_lock = threading.Lock()


def import_qdrant_client() -> Any:
    """The ``qdrant_client`` module, or :class:`MissingExtra` naming the extra to install."""
    try:
        import qdrant_client
    except ImportError as exc:
        raise MissingExtra("qdrant-client", "qdrant", "Qdrant サーバーへの保存") from exc
    return qdrant_client


def _positive_int(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"[qdrant] の {name} は 1 以上の整数にしてください(指定: {value!r})")
    return value


@dataclass(frozen=True, kw_only=True)
class QdrantSettings:
    """How to reach a Qdrant server and how collections are created on it.

    ``prefix`` starts the name of every Qdrant collection tansaku owns (``{prefix}{name}``,
    ``{prefix}{name}__units``, ``{prefix}meta``), so several workspaces can share a server.
    ``shard_number``/``replication_factor``/``write_consistency_factor`` are passed to
    collection creation (None: the server's default). ``on_disk`` keeps vectors and payloads on
    disk (collections larger than memory). ``quantization = "int8"`` gives a new records
    collection scalar-quantised dense vectors kept in RAM (a quarter of float32), searched with
    the server's default rescoring by the originals (on disk with ``on_disk``).
    ``timeout_s``: per request.
    """

    url: str
    api_key: str | None = field(default=None, repr=False)
    prefix: str = "tansaku_"
    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None
    on_disk: bool = False
    quantization: str | None = None
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        scheme = urlparse(self.url).scheme.lower()
        if scheme not in SCHEMES:
            raise ConfigError(
                f"Qdrant の URL「{self.url}」は使えません。"
                f"{', '.join(s + '://' for s in SCHEMES)} のいずれかで指定してください"
            )
        if scheme in SERVER_SCHEMES and not urlparse(self.url).hostname:
            raise ConfigError(f"Qdrant の URL「{self.url}」にホスト名がありません")
        parts = urlparse(self.url)
        if scheme == LOCAL_SCHEME and (parts.netloc or not Path(parts.path).is_absolute()):
            raise ConfigError(
                f"Qdrant の URL「{self.url}」のフォルダは絶対パスにしてください"
                "(例: qdrant+local:///var/lib/tansaku/qdrant)"
            )
        if not isinstance(self.prefix, str) or not _PREFIX.fullmatch(self.prefix):
            raise ConfigError(
                f"[qdrant] の prefix「{self.prefix}」は英数字・_・- の 64 文字以内にしてください"
            )
        _positive_int("shard_number", self.shard_number)
        _positive_int("replication_factor", self.replication_factor)
        _positive_int("write_consistency_factor", self.write_consistency_factor)
        if not isinstance(self.on_disk, bool):
            raise ConfigError(
                f"[qdrant] の on_disk は true か false にしてください: {self.on_disk}"
            )
        if self.quantization not in QUANTIZATIONS:
            raise ConfigError(
                f'[qdrant] の quantization「{self.quantization}」は使えません("int8" か指定なし)'
            )
        timeout = self.timeout_s
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ConfigError(f"[qdrant] の timeout_s は正の秒数にしてください(指定: {timeout!r})")

    @property
    def scheme(self) -> str:
        return urlparse(self.url).scheme.lower()

    @property
    def is_local(self) -> bool:
        """Whether the URL names qdrant-client's local mode (no server)."""
        return self.scheme in (LOCAL_SCHEME, MEMORY_SCHEME)

    def collection_name(self, name: str, suffix: str = "") -> str:
        """The Qdrant collection of tansaku collection ``name`` (``suffix``: ``__units`` …).
        ``meta`` (the registry, ``{prefix}meta``) and names containing ``__`` (the suffixes'
        separator: ``a__units`` would be the units of ``a``) would share a Qdrant collection
        with another one, and are refused."""
        if name == RESERVED or SEPARATOR in name:
            raise ConfigError(
                f"コレクション名「{name}」は Qdrant サーバーでは使えません"
                f"(「{RESERVED}」という名前と「{SEPARATOR}」を含む名前は予約されています)。別の名前にしてください"
            )
        return f"{self.prefix}{name}{suffix}"

    def client(self) -> QdrantClient:
        """A client for the URL: a new one for a server, the process's shared one for local
        mode (a folder is locked by its client; memory is per client)."""
        qc = import_qdrant_client()
        if not self.is_local:
            return qc.QdrantClient(  # type: ignore[no-any-return]
                url=self.url, api_key=self.api_key, timeout=max(1, math.ceil(self.timeout_s))
            )
        with _shared_lock:
            found = _shared.get(self.url)
            if found is None:
                if self.scheme == MEMORY_SCHEME:
                    local = qc.QdrantClient(location=":memory:")
                else:
                    folder = Path(urlparse(self.url).path)
                    folder.mkdir(parents=True, exist_ok=True)
                    # its SQLite file is used from every thread, one call at a time (below)
                    local = qc.QdrantClient(path=str(folder), force_disable_check_same_thread=True)
                found = _shared[self.url] = cast("QdrantClient", _OneAtATime(local))
            return found

    @classmethod
    def from_config(
        cls,
        home_config: Mapping[str, Any],
        *,
        url: str | None = None,
        api_key: str | None = None,
    ) -> QdrantSettings:
        """Settings from the ``[qdrant]`` table of ``tansaku.toml`` (as parsed) and the
        environment. The URL: ``url``, else ``TANSAKU_QDRANT_URL``, else the table's; the API
        key: ``api_key``, else ``TANSAKU_QDRANT_API_KEY`` (never the file)."""
        table = home_config.get("qdrant", {})
        if not isinstance(table, Mapping):
            raise ConfigError("tansaku.toml の [qdrant] はテーブルにしてください")
        if "api_key" in table:
            raise ConfigError(
                "tansaku.toml に Qdrant の API キーを書かないでください。"
                f"環境変数 {ENV_API_KEY} か connect(..., api_key=...) で渡してください"
            )
        unknown = sorted(set(table) - set(_KEYS))
        if unknown:
            raise ConfigError(
                f"[qdrant] に不明な項目があります: {', '.join(unknown)}"
                f"(使える項目: {', '.join(_KEYS)})"
            )
        chosen = url or os.environ.get(ENV_URL) or table.get("url")
        if not chosen or not isinstance(chosen, str):
            raise ConfigError(
                "Qdrant の URL がありません。connect の引数、環境変数 "
                f"{ENV_URL} か tansaku.toml の [qdrant] url で指定してください"
            )
        options: dict[str, Any] = {k: table[k] for k in _KEYS[1:] if k in table}
        if "timeout_s" in options and isinstance(options["timeout_s"], int):
            options["timeout_s"] = float(options["timeout_s"])
        key = api_key or os.environ.get(ENV_API_KEY) or None
        return cls(url=chosen, api_key=key, **options)


class _OneAtATime:
    """A local-mode client whose calls run one at a time: local mode keeps its collections in
    plain Python structures (and a folder's in SQLite) with no locking of its own, and a
    server front end calls it from several threads."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr
        lock = self._lock

        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return attr(*args, **kwargs)

        return call


def forget_shared_clients() -> None:
    """Close and drop the process's local-mode clients (tests; a folder can then be opened
    again by another process)."""
    with _shared_lock:
        for client in _shared.values():
            client.close()
        _shared.clear()
