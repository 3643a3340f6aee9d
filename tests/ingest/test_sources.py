from __future__ import annotations

from pathlib import Path

import pytest

from tansaku.ingest.loaders import LOADERS
from tansaku.ingest.sources import SUPPORTED_SUFFIXES, SourceFile, iter_source_files


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("テスト", encoding="utf-8")
    return path


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for rel in [
        "note-02.md",
        "note-01.md",
        "2024/05/日報.txt",
        "manual.PDF",
        "cards.jsonl",
        "stores.csv",
        "image.png",
        ".hidden.md",
        ".git/config.md",
        "~$報告書.docx",
        "sub/.cache/x.md",
        "報告書.docx",
    ]:
        _touch(root / rel)
    return root


def test_directory_recursive_sorted_filtered(tree: Path) -> None:
    sources = iter_source_files([tree])
    assert [s.doc_prefix for s in sources] == [
        "2024/05/日報",
        "cards",
        "manual",
        "note-01",
        "note-02",
        "stores",
        "報告書",
    ]
    assert all(s.root == tree for s in sources)
    assert sources[0].path == tree / "2024" / "05" / "日報.txt"


def test_file_given_directly_uses_its_stem(tree: Path) -> None:
    (source,) = iter_source_files([tree / "2024" / "05" / "日報.txt"])
    assert source == SourceFile(
        path=tree / "2024" / "05" / "日報.txt", root=tree / "2024" / "05", doc_prefix="日報"
    )


def test_doc_ids_do_not_depend_on_where_the_folder_lives(tree: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "notes"
    moved.parent.mkdir()
    tree.rename(moved)
    assert "2024/05/日報" in [s.doc_prefix for s in iter_source_files([moved])]


def test_missing_path_is_returned_not_raised(tmp_path: Path) -> None:
    missing = tmp_path / "nothing" / "ない.md"
    assert iter_source_files([missing]) == [
        SourceFile(path=missing, root=missing.parent, doc_prefix="ない")
    ]


def test_unsupported_file_given_directly_is_kept(tree: Path) -> None:
    (source,) = iter_source_files([tree / "image.png"])
    assert source.doc_prefix == "image"


def test_duplicates_are_dropped(tree: Path) -> None:
    sources = iter_source_files([tree / "note-01.md", tree, tree / "note-01.md"])
    paths = [s.path for s in sources]
    assert len(paths) == len(set(paths))
    assert sources[0].doc_prefix == "note-01"


def test_relative_paths_stay_relative(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree.parent)
    sources = iter_source_files([Path("notes")])
    assert sources[0].path == Path("notes/2024/05/日報.txt")


def test_every_supported_suffix_has_a_loader() -> None:
    assert set(LOADERS) == set(SUPPORTED_SUFFIXES)
