"""Hostile folders through ``tansaku ingest``: refused files are in ``failed``, the rest is
ingested, ``--follow-symlinks`` opts in to links out of the folder, ``[ingest]`` caps apply."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tansaku.cli.main import app

pytestmark = pytest.mark.e2e

runner = CliRunner()


def _ingest(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["ingest", *args, "-c", "notes", "--dry-run", "--json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture()
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "衛生.md").write_text(
        "# 衛生管理\n\n## 手洗い\n調理の前には石けんで30秒以上手を洗う。\n", encoding="utf-8"
    )
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "手順.md").write_text("# 手順\n\n開店前に冷蔵庫の温度を記録する。\n", "utf-8")
    os.symlink(shared / "手順.md", root / "手順.md")
    return root


def test_links_out_are_failures_until_followed(notes: Path) -> None:
    code, report = _ingest(str(notes))
    assert code == 1
    assert report["inserted"] == 1  # 衛生 only
    assert [
        (Path(f["path"]).name, "--follow-symlinks" in f["reason"]) for f in report["failed"]
    ] == [("手順.md", True)]
    code, report = _ingest(str(notes), "--follow-symlinks")
    assert code == 0 and report["failed"] == [] and report["inserted"] == 2


def test_size_cap_from_the_collection_config(notes: Path, tmp_path: Path) -> None:
    (notes / "ログ.txt").write_text("作業ログ\n\n" + "記録。" * 1_000, encoding="utf-8")
    cfg = tmp_path / "notes.toml"
    cfg.write_text('name = "notes"\n\n[ingest]\nmax_file_mb = 0.001\n', encoding="utf-8")
    code, report = _ingest(str(notes), "--config", str(cfg), "--follow-symlinks")
    assert code == 1
    assert report["inserted"] == 2
    (failure,) = report["failed"]
    assert Path(failure["path"]).name == "ログ.txt"
    assert failure["reason"].startswith("ファイルが大きすぎます(9,014 バイト。上限は 1,000 バイト)")
