"""``tansaku collections [delete]`` and ``tansaku doctor`` through the CLI runner."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.backends.locks import WriterLock
from tansaku.cli.main import app
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.records import Record
from tansaku.testing import HashEmbedder

runner = CliRunner()
CONFIG = CollectionConfig(
    name="reports",
    axes=(
        Axis(name="bm25", mode=AxisMode.BM25, weight=0.5),
        Axis(name="bigram", mode=AxisMode.BIGRAM, weight=0.5),
    ),
)
TEXTS = ["冷蔵庫が故障した。", "提供が遅いとのクレーム。", "レジ現金の過不足。"]


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    with tansaku.connect(h, embedder=HashEmbedder(32)) as ts:
        for team in ("shinjuku", "shibuya"):
            recs = [Record(f"{team}{i}#0", f"{team}{i}", "body", t) for i, t in enumerate(TEXTS)]
            ts.ingest_records(recs, collection="reports", config=CONFIG, team=team)
    return h


def test_collections_lists_and_delete_needs_yes(home) -> None:
    listed = runner.invoke(app, ["collections", "--json", "--home", str(home)])
    assert listed.exit_code == 0, listed.output
    (info,) = json.loads(listed.stdout)["collections"]
    assert info["points"] == 6 and info["teams"] == ["shibuya", "shinjuku"]
    refused = runner.invoke(app, ["collections", "delete", "reports", "--home", str(home)])
    assert refused.exit_code == 2 and "--yes" in refused.output


def test_delete_a_team_then_the_collection(home) -> None:
    args = ["collections", "delete", "reports", "--team", "shinjuku", "--yes", "--home", str(home)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0 and "削除しました" in done.output
    listed = json.loads(runner.invoke(app, ["collections", "--json", "--home", str(home)]).stdout)
    assert listed["collections"][0]["teams"] == ["shibuya"]
    gone = runner.invoke(app, ["collections", "delete", "reports", "--yes", "--home", str(home)])
    assert gone.exit_code == 0
    empty = runner.invoke(app, ["collections", "--home", str(home)])
    assert "コレクションはまだありません" in empty.output
    missing = runner.invoke(app, ["collections", "delete", "reports", "--yes", "--home", str(home)])
    assert missing.exit_code == 1 and "見つかりません" in missing.output


def test_read_commands_do_not_create_a_mistyped_home(tmp_path) -> None:
    typo = tmp_path / "typo" / ".tansaku"
    for args in (["collections"], ["search", "冷蔵庫", "-c", "reports"], ["doctor"]):
        result = runner.invoke(app, [*args, "--home", str(typo)])
        assert result.exit_code == 1 and "ワークスペース" in result.output, result.output
    assert not (tmp_path / "typo").exists()


def test_doctor_finds_and_repairs_tampered_statistics(home) -> None:
    col = home / "collections" / "reports"
    gen = col / "gens" / (col / "CURRENT").read_text(encoding="utf-8").strip()
    state = json.loads((gen / "state.json").read_text(encoding="utf-8"))
    state["bm25"]["shinjuku"] = {}  # as a crash before generations could leave it
    (gen / "state.json").write_text(json.dumps(state), encoding="utf-8")
    (col / "gens" / "g000099").mkdir()  # a killed writer's working generation

    found = runner.invoke(app, ["doctor", "--json", "--home", str(home)])
    assert found.exit_code == 1
    checks = {f["check"] for f in json.loads(found.stdout)["findings"]}
    assert checks == {"bm25", "leftovers"}
    fixed = runner.invoke(app, ["doctor", "--fix", "--home", str(home)])
    assert fixed.exit_code == 0 and "修復済み" in fixed.output
    clean = runner.invoke(app, ["doctor", "--home", str(home)])
    assert clean.exit_code == 0 and "問題は見つかりませんでした" in clean.output
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:
        st = ts.collection("reports").state.stats("shinjuku", "body")
        assert st.count == 3


def test_doctor_finds_and_rebuilds_missing_and_wrong_id_tables(home) -> None:
    """A generation without the records' id table, and a units table naming another
    document: both found, both built again from the shards by `--fix`."""
    from tansaku.store.idtable import IdTable, table_path, write_table

    col = home / "collections" / "reports"
    gen = col / "gens" / (col / "CURRENT").read_text(encoding="utf-8").strip()
    table_path(gen / "shard").unlink()
    units = IdTable.open(gen / "units")
    assert units is not None
    keys = units.ids.tolist()
    rows = units.rows(list(range(units.count)))
    rows[0] = (rows[0][0], rows[0][1], "別の文書", *rows[0][3:])
    del units
    write_table(gen / "units", zip(keys, rows, strict=True))

    found = runner.invoke(app, ["doctor", "--json", "--home", str(home)])
    assert found.exit_code == 1, found.output
    messages = [f["message"] for f in json.loads(found.stdout)["findings"] if f["check"] == "ids"]
    assert sorted(messages) == [
        "候補の識別表(shard.ids): ありません",
        "候補の識別表(units.ids): 1 件がシャードの内容と合いません",
    ]
    fixed = runner.invoke(app, ["doctor", "--fix", "--home", str(home)])
    assert fixed.exit_code == 0 and "修復済み" in fixed.output, fixed.output
    clean = runner.invoke(app, ["doctor", "--home", str(home)])
    assert clean.exit_code == 0 and "問題は見つかりませんでした" in clean.output, clean.output


def test_doctor_leaves_the_generation_an_ingest_is_writing(home) -> None:
    """`tansaku doctor` while an ingest runs: the writer's new generation is its work in
    progress, not a leftover (once the writer is gone, the same folder is one)."""
    col = home / "collections" / "reports"
    (col / "gens" / "g000099").mkdir()
    with WriterLock(col / "write.lock", "コレクション「reports」"):
        during = runner.invoke(app, ["doctor", "--home", str(home)])
    assert during.exit_code == 0 and "問題は見つかりませんでした" in during.output
    after = runner.invoke(app, ["doctor", "--home", str(home)])
    assert after.exit_code == 1 and "使われていない世代: g000099" in after.output


def test_doctor_leaves_a_generation_a_reader_still_holds(home) -> None:
    """A server holding the previous generation while an ingest commits: nothing to repair
    (the next writer removes it once it is let go)."""
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as reader:
        held = reader.collection("reports")  # a view: a lease on the current generation
        with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as writer:
            more = [Record("shinjuku9#0", "shinjuku9", "body", "食器洗浄機の水漏れ。")]
            writer.ingest_records(more, collection="reports", config=CONFIG, team="shinjuku")
        col = home / "collections" / "reports"
        assert len(list((col / "gens").glob("g*"))) == 2  # the held one is still there
        still = runner.invoke(app, ["doctor", "--home", str(home)])
        assert still.exit_code == 0 and "問題は見つかりませんでした" in still.output
        assert held.gen is not None


def test_merge_collections_through_the_cli(home) -> None:
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        recs = [Record("extra0#0", "extra0", "body", "食洗機から水漏れがあった。")]
        recs.append(Record("shinjuku0#0", "shinjuku0", "body", "冷蔵庫を修理に出した。"))
        ts.ingest_records(recs, collection="extra", config=CONFIG, team="shinjuku")
    base = ["collections", "merge", "reports", "extra", "--into", "all", "--home", str(home)]
    done = runner.invoke(app, [*base, "--team", "shinjuku", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["created"] and report["conflict"] == "skip"
    assert (report["documents"], report["skipped"]) == (4, 1)
    assert report["teams"] == {"shinjuku": 4}
    again = runner.invoke(
        app, [*base[:-2], "--on-conflict", "overwrite", "--team", "shinjuku", "--home", str(home)]
    )
    assert again.exit_code == 0, again.output
    assert "「reports」・「extra」をコレクション「all」に統合しました" in again.output
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        stored = {
            r.record.id: r.record.text
            for r in ts.collection("all").store.scan("shinjuku", with_text=True)
        }
        assert stored["shinjuku0#0"] == "冷蔵庫を修理に出した。"  # the later source overwrote
        assert ts.collection("all").store.count("shibuya") == 0
    bad = runner.invoke(app, [*base, "--on-conflict", "replace"])
    assert bad.exit_code == 2 and "skip / overwrite" in bad.output
    itself = runner.invoke(
        app, ["collections", "merge", "reports", "--into", "reports", "--home", str(home)]
    )
    assert itself.exit_code == 2 and "自分自身" in itself.output
    missing = runner.invoke(
        app, ["collections", "merge", "nothing", "--into", "x", "--home", str(home)]
    )
    assert missing.exit_code == 1 and "見つかりません" in missing.output


def test_reset_a_team_through_the_cli(home) -> None:
    refused = runner.invoke(
        app, ["collections", "reset", "--team", "shinjuku", "--home", str(home)]
    )
    assert refused.exit_code == 2 and "--yes" in refused.output
    args = ["collections", "reset", "--team", "shinjuku", "--yes", "--home", str(home)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "チーム「shinjuku」の記録 3 件を1 個のコレクションから削除しました" in done.output
    listed = json.loads(runner.invoke(app, ["collections", "--json", "--home", str(home)]).stdout)
    assert listed["collections"][0]["teams"] == ["shibuya"]
    again = runner.invoke(app, [*args, "--json"])
    assert json.loads(again.stdout)["collections"] == {}
    last = runner.invoke(app, ["collections", "reset", "-t", "shibuya", "-y", "--home", str(home)])
    assert "記録がなくなったためコレクションも削除" in last.output
    bad = runner.invoke(app, ["collections", "reset", "-t", "../x", "-y", "--home", str(home)])
    assert bad.exit_code != 0 and "チーム名" in bad.output
