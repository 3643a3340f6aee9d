"""Where the bundled sample data lives: inside the wheel (``tansaku/_examples``) or the repo."""

from __future__ import annotations

from pathlib import Path

from tansaku.errors import TansakuError


def examples_dir() -> Path:
    """The ``examples/`` folder shipped with tansaku."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[1] / "_examples", here.parents[3] / "examples"):
        if (candidate / "configs").is_dir():
            return candidate
    raise TansakuError(
        "同梱のサンプルデータ(examples/)が見つかりません。リポジトリから実行するか、"
        "tansaku を再インストールしてください"
    )
