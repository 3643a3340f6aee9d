"""Download a public data file (JSONL, CSV, TSV, JSON, text, Markdown, or a ``.zip`` of them)
from a URL into a folder, to be ingested like an uploaded file.

>>> got = download("hf://datasets/owner/name/data/train.jsonl", folder, settings)
>>> got.paths                                   # [folder / "train.jsonl"]

Every hop (the URL and each redirect, at most ``max_redirects``) is checked by
:func:`~tansaku.transfer.fetch_guard.checked_addresses` and connected to a checked address
(the ``Host`` header and TLS name stay the host's), so a name that resolves differently the
second time, or a redirect to ``169.254.169.254``, never reaches an internal address. The body is
streamed to disk and refused past ``max_bytes`` (the partial file is removed); the whole download
is bounded by ``timeout_s``. Proxy variables of the environment are not used (a proxy would
connect to whatever the name resolves to there). A ``.zip`` is unpacked (its supported members
only, within the workspace's ``[ingest] max_inflated_mb``) and removed.

Hugging Face datasets are fetched as plain files (``hf://datasets/…`` or
``https://huggingface.co/datasets/<owner>/<name>/resolve/main/<file>``), not through the
``datasets`` library: it pulls in pyarrow, pandas and fsspec for what is one HTTP download here.
"""

from __future__ import annotations

import re
import ssl
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from tansaku.transfer.fetch_guard import FetchError, FetchSettings, checked_addresses, plain_url

SUFFIXES = frozenset({".jsonl", ".csv", ".tsv", ".json", ".txt", ".md", ".markdown"})
ACCEPTED = SUFFIXES | {".zip"}
REDIRECTS = frozenset({301, 302, 303, 307, 308})
CHUNK = 256 * 1024
MAX_MEMBERS = 10_000
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069/\\]")


@dataclass(frozen=True)
class Downloaded:
    """What a download left in its folder: the files, what to hand the ingest (the file, or
    the folder a zip was unpacked into, so its members' ids keep their folders:
    ``data/faq``), the name of what was fetched, its size in bytes and the URL it came from
    (after ``hf://`` expansion)."""

    name: str
    paths: list[Path]
    sources: list[Path]
    size: int
    url: str


def _wrong_type(name: str, why: str = "") -> FetchError:
    return FetchError(
        415,
        "unsupported_type",
        f"「{name[:200]}」は取り込めない形式です{why}。対応形式: " + " ".join(sorted(ACCEPTED)),
    )


def _too_large(limit: int) -> FetchError:
    return FetchError(
        413,
        "file_too_large",
        f"ダウンロードするファイルが大きすぎます(上限 {limit:,} バイト。"
        "tansaku.toml の [fetch] max_mb で変えられます)",
    )


def _unreachable(url: str, why: str) -> FetchError:
    return FetchError(422, "fetch_unreachable", f"{url[:300]} から取得できません: {why}")


def file_name(url: str, disposition: str | None = None) -> str:
    """The name the download is saved under: the last part of the URL's path, or the
    ``filename`` of a ``Content-Disposition`` when the URL's has no accepted suffix."""
    name = unquote(PurePosixPath(urlsplit(url).path).name)
    if disposition and Path(name).suffix.lower() not in ACCEPTED:
        found = re.search(r'filename\*?=(?:UTF-8\'\')?"?([^";]+)"?', disposition, re.I)
        if found:
            name = unquote(found.group(1)).rsplit("/", 1)[-1]
    name = _UNSAFE.sub("_", name).strip().lstrip(".")[:200]
    return name or "download"


def _host_header(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def _open(client: httpx.Client, url: str, settings: FetchSettings) -> httpx.Response:
    """One hop: the host checked, the connection pinned to the checked address."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise FetchError(400, "invalid_url", "URL にホスト名がありません")
    if parts.username or parts.password:
        raise FetchError(400, "invalid_url", "URL に利用者名やパスワードは含められません")
    https = parts.scheme.lower() == "https"
    try:
        port = parts.port
    except ValueError:
        raise FetchError(400, "invalid_url", "URL のポート番号が正しくありません") from None
    addresses = checked_addresses(host, port or (443 if https else 80), settings)
    extensions = {"sni_hostname": host} if https else {}
    for i, address in enumerate(addresses):
        pinned = httpx.URL(url).copy_with(host=address)
        request = client.build_request(
            "GET", pinned, headers={"Host": _host_header(host, port)}, extensions=extensions
        )
        try:
            return client.send(request, stream=True)
        except httpx.ConnectError as exc:
            if i + 1 < len(addresses):
                continue  # the name's next address (IPv6 then IPv4, say)
            raise _unreachable(url, f"接続できません({type(exc).__name__})") from None
        except httpx.TimeoutException:
            raise _unreachable(url, "応答がありません(時間切れ)") from None
        except httpx.HTTPError as exc:
            raise _unreachable(url, f"接続できません({type(exc).__name__})") from None
    raise _unreachable(url, "接続先のアドレスがありません")


def _follow(client: httpx.Client, url: str, settings: FetchSettings) -> httpx.Response:
    for _ in range(settings.max_redirects + 1):
        response = _open(client, url, settings)
        location = response.headers.get("location")
        if response.status_code not in REDIRECTS or not location:
            return response
        response.close()
        url = urljoin(url, location)
        if urlsplit(url).scheme.lower() not in ("http", "https"):
            raise FetchError(400, "invalid_url", "転送先の URL が http(s) ではありません")
    raise _unreachable(url, f"転送が多すぎます({settings.max_redirects} 回まで)")


def _save(response: httpx.Response, target: Path, settings: FetchSettings, end: float) -> int:
    limit = settings.max_bytes
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    size = 0
    try:
        with target.open("wb") as fh:
            for chunk in response.iter_bytes(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                if time.monotonic() > end:
                    raise _unreachable(str(response.request.url), "時間内に終わりませんでした")
                fh.write(chunk)
    except httpx.HTTPError as exc:
        target.unlink(missing_ok=True)
        raise _unreachable(
            str(response.request.url), f"途中で切れました({type(exc).__name__})"
        ) from None
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return size


def _member_path(folder: Path, name: str) -> Path | None:
    """Where a zip member goes (its folders kept, cleaned), or None when it is skipped."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "/")]
    if not parts or ".." in parts or any(p.startswith(".") or p == "__MACOSX" for p in parts):
        return None
    if Path(parts[-1]).suffix.lower() not in SUFFIXES:
        return None
    return folder.joinpath(*(_UNSAFE.sub("_", p)[:200] for p in parts))


def unzip(archive: Path, folder: Path, max_inflated: int) -> list[Path]:
    """The supported members of ``archive`` written under ``folder``; refused (415) when it is
    not a zip, holds none, or would inflate past ``max_inflated`` bytes."""
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError):
        raise _wrong_type(archive.name, "(zip として読めません)") from None
    with zf:
        members = [m for m in zf.infolist() if not m.is_dir()]
        if len(members) > MAX_MEMBERS:
            raise _wrong_type(archive.name, f"(中のファイルが {MAX_MEMBERS:,} 個を超えます)")
        chosen = [(m, _member_path(folder, m.filename)) for m in members]
        chosen = [(m, p) for m, p in chosen if p is not None]
        total = sum(m.file_size for m, _ in chosen)
        if total > max_inflated:
            raise _too_large(max_inflated)
        if not chosen:
            raise _wrong_type(archive.name, "(中に取り込めるファイルがありません)")
        out = []
        for member, path in chosen:
            if path is None:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(member) as src, path.open("wb") as dst:
                while block := src.read(CHUNK):
                    dst.write(block)
            out.append(path)
    return out


def download(
    url: str,
    folder: Path,
    settings: FetchSettings,
    *,
    max_inflated: int = 2 * 1024**3,
    verify: ssl.SSLContext | bool = True,
) -> Downloaded:
    """Fetch ``url`` (``http(s)://`` or ``hf://datasets/…``) into ``folder``; a FetchError
    (Japanese, with an HTTP status and code) when the host is refused, the file is too large or
    of a wrong type, or the server cannot be reached. ``verify``: the TLS trust (default: the
    system's certificate authorities, via httpx)."""
    url = plain_url(url)
    end = time.monotonic() + settings.timeout_s
    timeout = httpx.Timeout(settings.timeout_s)
    with httpx.Client(
        timeout=timeout, trust_env=False, follow_redirects=False, verify=verify
    ) as client:
        response = _follow(client, url, settings)
        try:
            if response.status_code != 200:
                raise _unreachable(url, f"サーバーが {response.status_code} を返しました")
            name = file_name(url, response.headers.get("content-disposition"))
            if Path(name).suffix.lower() not in ACCEPTED:
                raise _wrong_type(name)
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind == "text/html":
                raise _wrong_type(name, "(サーバーが HTML のページを返しました)")
            target = folder / name
            size = _save(response, target, settings, end)
        finally:
            response.close()
    if target.suffix.lower() != ".zip":
        return Downloaded(name=name, paths=[target], sources=[target], size=size, url=url)
    unpacked = folder / target.stem
    try:
        paths = unzip(target, unpacked, max_inflated)
    finally:
        target.unlink(missing_ok=True)
    return Downloaded(name=name, paths=paths, sources=[unpacked], size=size, url=url)


__all__ = ["ACCEPTED", "Downloaded", "FetchError", "download", "file_name", "unzip"]
