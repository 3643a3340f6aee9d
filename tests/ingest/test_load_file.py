"""Whole-file failures come back as errors, never as exceptions."""

from __future__ import annotations

from pathlib import Path

import pytest
from ingest_support import config, load, reasons, text_pdf, write

from tansaku.errors import ConfigError
from tansaku.ingest.loaders import load_file, reading
from tansaku.ingest.sources import SourceFile


def test_missing_path(tmp_path: Path) -> None:
    path = tmp_path / "どこにもない.md"
    result = load(path)
    assert result.records == ()
    (error,) = result.errors
    assert error.path == str(path)
    assert error.reason == "ファイルが見つかりません"


def test_unsupported_suffix(tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(b"\x89PNG\r\n")
    (reason,) = reasons(load(path))
    assert reason.startswith("対応していない形式です(.png)。対応形式: ")
    assert ".md" in reason and ".docx" in reason


def test_directory_given_as_a_source(tmp_path: Path) -> None:
    (tmp_path / "odd.md").mkdir()
    source = SourceFile(path=tmp_path / "odd.md", root=tmp_path, doc_prefix="odd")
    assert reasons(load_file(source, config())) == ["ファイルではなくディレクトリです"]


def test_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "secret.txt", "社外秘")

    def deny(path: Path) -> int:  # tests run as root, where chmod 000 does not deny
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(reading, "_open", deny)
    assert reasons(load(path)) == ["読み取り権限がありません"]


@pytest.mark.parametrize(
    "suffix", [".md", ".txt", ".csv", ".tsv", ".jsonl", ".json", ".pdf", ".docx"]
)
def test_empty_file_of_every_kind(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty{suffix}"
    path.write_bytes(b"")
    result = load(path)
    assert result.records == ()
    assert reasons(result) == ["ファイルが空です"]


@pytest.mark.parametrize("suffix", [".md", ".txt", ".csv", ".jsonl", ".json", ".pdf", ".docx"])
def test_garbage_never_raises(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"garbage{suffix}"
    path.write_bytes(bytes(range(256)) * 4)
    result = load(path)
    assert result.records == ()
    assert len(result.errors) == 1


def test_whitespace_only_markdown(tmp_path: Path) -> None:
    assert reasons(load(write(tmp_path / "blank.md", " \n\n\u3000\n"))) == ["ファイルが空です"]


def test_title_only_markdown_has_no_text(tmp_path: Path) -> None:
    assert reasons(load(write(tmp_path / "t.md", "# 見出しだけ\n"))) == [
        "検索できるテキストがありません"
    ]


def test_invalid_ingest_config_raises_config_error(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", "# A\n本文\n")
    with pytest.raises(ConfigError, match="不明なキー"):
        load(path, config({"markdwn": {}}))


def test_pdf_is_read_lazily(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, tansaku.ingest.loaders, tansaku.ingest.sources, tansaku.ingest.chunking;"
        "print(sorted(m for m in ('pypdf', 'docx', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    path = tmp_path / "a.pdf"
    path.write_bytes(text_pdf(["lazy"]))
    assert load(path).records[0].text == "lazy"
