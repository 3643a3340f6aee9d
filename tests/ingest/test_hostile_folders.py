"""Folders that hold symlinks out, FIFOs, devices, sockets and link loops.

Anything that could hang or eat memory on a regression (a FIFO, ``/dev/zero``) is walked and
loaded in a child process with a time guard and a memory limit, so a regression fails the
test instead of hanging or exhausting the machine. The guard is never part of an assertion.
"""

from __future__ import annotations

import inspect
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ingest_support import config, write

from tansaku.collection import Collection, CollectionState
from tansaku.ingest.loaders import load_file
from tansaku.ingest.sources import SourceFile, iter_source_files

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and rlimits are POSIX")

GUARD_S = 120  # only for a regression that blocks: a passing run takes about a second
MEMORY_LIMIT = 2 << 30

NOTE = "# 衛生管理\n\n## 手洗い\n調理の前には石けんで30秒以上手を洗う。\n"
REPORT = "日報\n\n店舗: 新宿\n本日は来客が多く、唐揚げ定食が品切れになった。\n"

_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path

    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    args = json.loads(sys.argv[2])

    from tansaku.config import CollectionConfig
    from tansaku.ingest.loaders import load_file
    from tansaku.ingest.sources import SourceFile, iter_source_files

    cfg = CollectionConfig(name="test")
    if args["direct"]:
        sources = [SourceFile(Path(p), Path(p).parent, Path(p).stem) for p in args["paths"]]
    else:
        sources = iter_source_files(
            [Path(p) for p in args["paths"]], follow_symlinks=args["follow"]
        )
    records, failures = [], []
    for source in sources:
        result = load_file(source, cfg)
        records += [[r.id, r.text] for r in result.records]
        failures += [[e.path, e.reason] for e in result.errors]
    print(json.dumps({"records": records, "failures": failures}, ensure_ascii=False))
    """
)


def _load_guarded(
    paths: list[Path], *, follow: bool = False, direct: bool = False
) -> dict[str, Any]:
    """Walk and load ``paths`` in a child process that cannot hang or grow without bound."""
    args = json.dumps({"paths": [str(p) for p in paths], "follow": follow, "direct": direct})
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(MEMORY_LIMIT), args],
            capture_output=True,
            text=True,
            timeout=GUARD_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the walk or a loader blocked (it opened a FIFO or a device?)")
    assert out.returncode == 0, out.stderr[-2000:]
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _failures(data: dict[str, Any]) -> dict[str, str]:
    return {Path(path).name: reason for path, reason in data["failures"]}


def _doc_ids(data: dict[str, Any]) -> set[str]:
    return {rid.split(":")[0] for rid, _ in data["records"]}


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A folder with two good files; each test adds something hostile beside them."""
    folder = tmp_path / "notes"
    write(folder / "衛生.md", NOTE)
    write(folder / "2024" / "日報.txt", REPORT)
    return folder


def test_symlink_to_dev_zero_is_refused(root: Path) -> None:
    os.symlink("/dev/zero", root / "zero.md")
    data = _load_guarded([root])
    assert _doc_ids(data) == {"衛生", "2024/日報"}
    reason = _failures(data)["zero.md"]
    assert "取り込むフォルダの外" in reason and "/dev/zero" in reason
    assert "--follow-symlinks" in reason
    # following links does not make a device readable
    followed = _load_guarded([root], follow=True)
    assert _doc_ids(followed) == {"衛生", "2024/日報"}
    assert _failures(followed)["zero.md"] == (
        "リンク先が通常のファイルではありません(キャラクタデバイス: /dev/zero)。読み込みません"
    )


def test_symlink_to_dev_zero_given_directly_is_never_read(root: Path) -> None:
    link = root / "zero.md"
    os.symlink("/dev/zero", link)
    assert "取り込むフォルダの外" in _failures(_load_guarded([link]))["zero.md"]
    # even a SourceFile made by hand (no walk) is stat-ed before it is opened
    assert "キャラクタデバイス" in _failures(_load_guarded([link], direct=True))["zero.md"]


def test_fifo_named_md_is_skipped_and_good_files_ingested(root: Path) -> None:
    os.mkfifo(root / "pipe.md")
    os.mkfifo(root / "2024" / "pipe.csv")
    os.mkfifo(root / "no-suffix-pipe")  # an unsupported name is skipped silently, as ever
    data = _load_guarded([root])
    assert _doc_ids(data) == {"衛生", "2024/日報"}
    assert _failures(data) == {
        "pipe.md": "通常のファイルではありません(名前付きパイプ(FIFO))。読み込みません",
        "pipe.csv": "通常のファイルではありません(名前付きパイプ(FIFO))。読み込みません",
    }


def test_fifo_given_directly_or_by_hand_is_never_opened(root: Path) -> None:
    fifo = root / "pipe.md"
    os.mkfifo(fifo)
    expected = {"pipe.md": "通常のファイルではありません(名前付きパイプ(FIFO))。読み込みません"}
    assert _failures(_load_guarded([fifo])) == expected
    assert _failures(_load_guarded([fifo], direct=True)) == expected


def test_fifo_reaches_the_ingest_report_through_load_sources(root: Path) -> None:
    from tansaku.ingest.pipeline import load_sources

    os.mkfifo(root / "pipe.md")
    preview = Collection(root.parent / "col", config(), CollectionState())
    records, failures = load_sources([root], preview)  # the FIFO is refused by the walk
    assert {r.doc_id for r in records} == {"衛生", "2024/日報"}
    assert [(Path(f.path).name, "FIFO" in f.reason) for f in failures] == [("pipe.md", True)]


def test_symlink_to_etc_passwd_is_refused(root: Path) -> None:
    if not Path("/etc/passwd").is_file():
        pytest.skip("no /etc/passwd on this system")
    os.symlink("/etc/passwd", root / "passwd.md")
    os.symlink("/etc/passwd", root / "2024" / "users.txt")
    sources = iter_source_files([root])
    results = [load_file(s, config()) for s in sources]
    texts = [r.text for result in results for r in result.records]
    assert not any("root:" in t for t in texts)
    failures = {Path(e.path).name: e.reason for res in results for e in res.errors}
    assert failures == {
        "passwd.md": "シンボリックリンクの先が取り込むフォルダの外です(→ /etc/passwd)。"
        "読み込むには --follow-symlinks(follow_symlinks=True)を指定してください",
        "users.txt": "シンボリックリンクの先が取り込むフォルダの外です(→ /etc/passwd)。"
        "読み込むには --follow-symlinks(follow_symlinks=True)を指定してください",
    }
    # a shell glob (notes/*.md) hands the link over directly: refused the same way
    (direct,) = iter_source_files([root / "passwd.md"])
    assert "取り込むフォルダの外" in direct.refused


def test_symlink_out_of_the_root_is_followed_when_asked(root: Path, tmp_path: Path) -> None:
    outside = write(
        tmp_path / "shared" / "共通手順.md", "# 共通手順\n\n開店前に冷蔵庫の温度を記録する。\n"
    )
    os.symlink(outside, root / "手順.md")
    os.symlink(outside.parent, root / "共有")
    refused = iter_source_files([root])
    assert {s.doc_prefix: bool(s.refused) for s in refused} == {
        "2024/日報": False,
        "手順": True,
        "共有": True,  # a folder link out is reported too: its files would be missing
        "衛生": False,
    }
    followed = iter_source_files([root], follow_symlinks=True)
    assert [(s.doc_prefix, s.refused) for s in followed] == [
        ("2024/日報", ""),
        ("共有/共通手順", ""),  # the same file as 手順.md: read once, the first link in order
        ("衛生", ""),
    ]


def test_symlink_inside_root_is_followed(root: Path) -> None:
    write(root / ".shared" / "共通手順.md", "# 共通手順\n\n開店前に冷蔵庫の温度を記録する。\n")
    os.symlink(".shared/共通手順.md", root / "手順.md")  # hidden target: only the link finds it
    os.symlink("2024", root / "最新")  # a folder link to a folder walked anyway: not twice
    os.symlink("衛生.md", root / "衛生のコピー.md")  # the real path wins over a link
    sources = iter_source_files([root])
    assert [(s.doc_prefix, s.refused) for s in sources] == [
        ("2024/日報", ""),
        ("手順", ""),
        ("衛生", ""),
    ]
    records = [r for s in sources for r in load_file(s, config()).records]
    assert any("冷蔵庫の温度" in r.text for r in records)


def test_folder_link_to_a_hidden_folder_inside_root_is_walked(root: Path) -> None:
    write(root / ".archive" / "2023" / "旧日報.txt", REPORT)
    os.symlink(".archive", root / "過去分")
    assert [s.doc_prefix for s in iter_source_files([root])] == [
        "2024/日報",
        "衛生",
        "過去分/2023/旧日報",
    ]


def test_symlink_loops_end_and_are_reported(root: Path) -> None:
    os.symlink("..", root / "2024" / "上へ")  # a folder cycle: walked once, silently
    os.symlink(".", root / "ここ")
    os.symlink("self.md", root / "self.md")
    os.symlink("b.md", root / "a.md")
    os.symlink("a.md", root / "b.md")
    os.symlink("ループ", root / "ループ")  # no suffix: skipped like any unsupported name
    sources = iter_source_files([root])
    assert [(s.doc_prefix, s.refused) for s in sources] == [
        ("2024/日報", ""),
        ("a", "シンボリックリンクが循環しています"),
        ("b", "シンボリックリンクが循環しています"),
        ("self", "シンボリックリンクが循環しています"),
        ("衛生", ""),
    ]


def test_broken_symlink_is_reported(root: Path) -> None:
    os.symlink("消えたファイル.md", root / "リンク.md")
    os.symlink("消えたフォルダ", root / "リンク")  # no suffix: could be anything, skipped
    (refused,) = [s for s in iter_source_files([root]) if s.refused]
    assert refused.path == root / "リンク.md"
    assert refused.refused == "シンボリックリンクの先がありません(→ 消えたファイル.md)"
    (error,) = load_file(refused, config()).errors
    assert (error.path, error.reason) == (str(root / "リンク.md"), refused.refused)


def test_socket_is_skipped(root: Path) -> None:
    path = root / "s.md"
    if len(str(path).encode()) > 100:
        pytest.skip("tmp path too long for a unix socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
        refused = [s for s in iter_source_files([root]) if s.refused]
    assert [(s.path.name, s.refused) for s in refused] == [
        ("s.md", "通常のファイルではありません(ソケット)。読み込みません")
    ]


def test_device_given_directly_is_refused() -> None:
    (source,) = iter_source_files([Path("/dev/null")])
    assert source.refused == "通常のファイルではありません(キャラクタデバイス)。読み込みません"
    assert [e.reason for e in load_file(source, config()).errors] == [source.refused]


def test_folder_link_given_directly_must_stay_in_its_parent(root: Path, tmp_path: Path) -> None:
    os.symlink(root, tmp_path / "リンク")
    inside = iter_source_files([tmp_path / "リンク"])  # tmp_path/リンク → tmp_path/notes
    assert [s.doc_prefix for s in inside] == ["2024/日報", "衛生"]
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(root, other / "notes")
    (refused,) = iter_source_files([other / "notes"])
    assert "取り込むフォルダの外" in refused.refused
    assert [s.doc_prefix for s in iter_source_files([other / "notes"], follow_symlinks=True)] == [
        "2024/日報",
        "衛生",
    ]


def test_unreadable_folder_is_reported_and_the_rest_loads(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = root / "秘密"
    write(locked / "x.md", NOTE)
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:  # tests run as root, where chmod 000 does not deny
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    sources = iter_source_files([root])
    assert [(s.doc_prefix, s.refused) for s in sources] == [
        ("2024/日報", ""),
        ("秘密", "フォルダを読み取れません: 読み取り権限がありません"),
        ("衛生", ""),
    ]


def test_refused_source_made_by_hand_is_reported_without_reading(tmp_path: Path) -> None:
    path = write(tmp_path / "a.md", NOTE)
    source = SourceFile(path, tmp_path, "a", refused="シンボリックリンクが循環しています")
    result = load_file(source, config())
    assert result.records == ()
    assert [(e.path, e.reason) for e in result.errors] == [(str(path), source.refused)]


def test_deeply_nested_folders_do_not_hit_the_recursion_limit(tmp_path: Path) -> None:
    # The tree is only 300 deep (shutil.rmtree, which cleans tmp_path, recurses too): the
    # recursion limit is lowered below it for the walk instead.
    root = deep = tmp_path / "n"
    for _ in range(300):
        deep = deep / "d"
    write(deep / "底.md", NOTE)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)
    try:
        sources = iter_source_files([root])
    finally:
        sys.setrecursionlimit(limit)
    (source,) = sources
    assert source.doc_prefix == "d/" * 300 + "底" and not source.refused
