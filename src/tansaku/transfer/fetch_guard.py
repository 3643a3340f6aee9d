"""Which URLs a download may reach: the ``[fetch]`` table of ``<home>/tansaku.toml``, the URL
forms accepted (``http://``, ``https://`` and the ``hf://datasets/…`` shorthand) and the address
check that keeps a server from being steered at its own network (SSRF).

By default only public addresses are reached: a host name is resolved and every address it
resolves to must be global (not loopback, private, link-local, shared, multicast or reserved);
the connection is then made to the checked address, so a second resolution cannot swap it.
``allow_hosts`` names hosts reached whatever their address (an intranet mirror, or
``127.0.0.1`` in tests); ``public = false`` allows only those.

    [fetch]
    allow_hosts = ["data.example.co.jp"]
    public = true          # any public address besides allow_hosts
    max_mb = 200           # refused past this while streaming
    timeout_s = 60         # per read and for the whole download
    max_redirects = 5
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from tansaku.errors import ConfigError, TansakuError
from tansaku.workspace import settings_table

MB = 1024 * 1024
HF_BASE = "https://huggingface.co/datasets"


class FetchError(TansakuError):
    """A download refused or failed: ``status`` (the HTTP status a server answers) and a stable
    ``code``; the message is Japanese."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def refused_host(host: str, why: str) -> FetchError:
    return FetchError(
        403,
        "fetch_host_refused",
        f"ホスト「{host[:200]}」からは取り込めません({why})。"
        "tansaku.toml の [fetch] allow_hosts に加えたホストだけが許可されます",
    )


@dataclass(frozen=True)
class FetchSettings:
    allow_hosts: frozenset[str] = field(default_factory=frozenset)
    public: bool = True
    max_bytes: int = 100 * MB
    timeout_s: float = 60.0
    max_redirects: int = 5


_NUMBERS = {"max_mb": (0.001, 100_000.0), "timeout_s": (0.1, 3600.0), "max_redirects": (0, 20)}


def _number(name: str, value: Any) -> float:
    low, high = _NUMBERS[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigError(
            f"tansaku.toml の [fetch] {name} は {low:g}〜{high:g} の数にしてください"
            f"(指定: {value!r})"
        )
    return float(value)


def settings_from(table: Mapping[str, Any]) -> FetchSettings:
    """The settings of a parsed ``[fetch]`` table; a wrong or unknown key is a ConfigError."""
    if not isinstance(table, Mapping):
        raise ConfigError("tansaku.toml の [fetch] は表(テーブル)にしてください")
    unknown = sorted(set(table) - {"allow_hosts", "public", *_NUMBERS})
    if unknown:
        raise ConfigError(f"tansaku.toml の [fetch] に不明なキーがあります: {unknown}")
    hosts = table.get("allow_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        raise ConfigError("tansaku.toml の [fetch] allow_hosts はホスト名の配列にしてください")
    public = table.get("public", True)
    if not isinstance(public, bool):
        raise ConfigError("tansaku.toml の [fetch] public は true か false にしてください")
    out = FetchSettings(allow_hosts=frozenset(h.lower().strip("[]") for h in hosts), public=public)
    if "max_mb" in table:
        out = replace(out, max_bytes=max(1, int(_number("max_mb", table["max_mb"]) * MB)))
    if "timeout_s" in table:
        out = replace(out, timeout_s=_number("timeout_s", table["timeout_s"]))
    if "max_redirects" in table:
        out = replace(out, max_redirects=int(_number("max_redirects", table["max_redirects"])))
    return out


def workspace_settings(home: Path) -> FetchSettings:
    """The ``[fetch]`` settings of the workspace at ``home`` (read at every download)."""
    return settings_from(settings_table(home, "fetch"))


def plain_url(url: str) -> str:
    """``url`` as an ``http(s)://`` URL: ``hf://datasets/<owner>/<name>[@rev]/<path>`` becomes
    the file's download URL on huggingface.co; any other scheme is refused (400)."""
    url = url.strip()
    if url.startswith("hf://"):
        rest = url.removeprefix("hf://")
        parts = rest.split("/", 4)
        if len(parts) < 4 or parts[0] != "datasets" or not all(parts[1:4]):
            raise FetchError(
                400,
                "invalid_url",
                "hf:// は hf://datasets/所有者/名前/ファイルのパス の形にしてください",
            )
        _, owner, name, *path = parts
        name, _, rev = name.partition("@")
        return f"{HF_BASE}/{owner}/{name}/resolve/{quote(rev or 'main', safe='')}/{'/'.join(path)}"
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(
            400, "invalid_url", "URL は https:// か http://(または hf://datasets/…)にしてください"
        )
    return url


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


def _literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    return True


def checked_addresses(host: str, port: int, settings: FetchSettings) -> list[str]:
    """The addresses to connect to for ``host`` (tried in order), after the check: every
    address the name resolves to must be allowed (an allowed host: any). Raises FetchError
    before any connection."""
    name = host.lower().strip("[]")
    allowed = name in settings.allow_hosts
    if not allowed and not settings.public:
        raise refused_host(host, "許可されたホストではありません")
    if _literal(name):  # an address in the URL: checked as it is, never resolved
        if not allowed and not _is_public(name):
            raise refused_host(host, f"公開されていないアドレス {name} です")
        return [name.split("%", 1)[0]]
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise FetchError(
            422, "fetch_unreachable", f"ホスト「{host[:200]}」が見つかりません(名前を引けません)"
        ) from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise FetchError(422, "fetch_unreachable", f"ホスト「{host[:200]}」が見つかりません")
    if not allowed:
        for address in addresses:
            if not _is_public(address):
                raise refused_host(host, f"公開されていないアドレス {address} を指しています")
    return addresses


__all__ = [
    "FetchError",
    "FetchSettings",
    "checked_addresses",
    "plain_url",
    "settings_from",
    "workspace_settings",
]
