"""The CLI through typer's runner, with the real default embedder on a tiny corpus."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tansaku.cli.main import app

pytestmark = pytest.mark.integration

runner = CliRunner()


@pytest.fixture
def docs(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "claim.txt").write_text(
        "お客様から料理の温度が低いとのクレームがありました。すぐに作り直しました。",
        encoding="utf-8",
    )
    (d / "fridge.txt").write_text(
        "朝の仕込み時に冷蔵庫の故障が発覚し、一部の食材を廃棄しました。", encoding="utf-8"
    )
    return d


def _json(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ingest_search_collections_json(docs):
    data = _json(runner.invoke(app, ["ingest", str(docs), "-c", "reports", "--json"]))
    assert data == {
        "by_field": {"body": 2},
        "inserted": 2,
        "updated": 0,
        "unchanged": 0,
        "deleted": 0,
        "embedded": 2,
        "skipped": 0,
        "dry_run": False,
        "failed": [],
    }
    again = _json(runner.invoke(app, ["ingest", str(docs), "-c", "reports", "--json"]))
    assert again["embedded"] == 0 and again["unchanged"] == 2

    res = _json(runner.invoke(app, ["search", "冷蔵庫が壊れた", "-c", "reports", "--json"]))
    assert set(res) == {"query_id", "query", "hits", "plan", "timings_ms"}
    top = res["hits"][0]
    assert top["doc_id"] == "fridge"
    assert set(top) == {"doc_id", "id", "field", "score", "text", "metadata", "axes"}
    assert set(top["axes"]) == {"bm25", "dense", "bigram"}
    assert {"rank", "score"} == set(top["axes"]["bm25"])

    cols = _json(runner.invoke(app, ["collections", "--json"]))
    assert cols["collections"][0]["name"] == "reports"
    assert cols["collections"][0]["points"] == 2


def test_human_output_and_team_isolation(docs):
    assert (
        runner.invoke(app, ["ingest", str(docs), "-c", "reports", "--team", "shinjuku"]).exit_code
        == 0
    )
    human = runner.invoke(app, ["search", "クレーム", "-c", "reports", "-t", "shinjuku"])
    assert human.exit_code == 0
    assert "claim" in human.stdout
    other = _json(
        runner.invoke(app, ["search", "クレーム", "-c", "reports", "-t", "shibuya", "--json"])
    )
    assert other["hits"] == []


def test_dry_run_writes_audit_and_no_collection(docs, tmp_path):
    audit = tmp_path / "audit.jsonl"
    data = _json(
        runner.invoke(
            app,
            ["ingest", str(docs), "-c", "reports", "--dry-run", "--audit", str(audit), "--json"],
        )
    )
    assert data["dry_run"] and data["inserted"] == 2
    rows = [json.loads(x) for x in audit.read_text(encoding="utf-8").splitlines()]
    assert {r["action"] for r in rows} == {"insert"}
    cols = _json(runner.invoke(app, ["collections", "--json"]))
    assert cols["collections"] == []


def test_errors_are_japanese_and_nonzero(docs, tmp_path):
    assert runner.invoke(app, ["init"]).exit_code == 0  # read commands never create one
    missing = runner.invoke(app, ["search", "クレーム", "-c", "nothing"])
    assert missing.exit_code == 1
    assert "コレクション「nothing」が見つかりません" in missing.stderr

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "正しい行です"}\n{こわれた行\n', encoding="utf-8")
    res = runner.invoke(app, ["ingest", str(bad), "-c", "reports", "--json"])
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["inserted"] == 1
    assert data["failed"] and "2" in data["failed"][0]["path"] + data["failed"][0]["reason"]

    bad_date = runner.invoke(app, ["search", "売上", "-c", "reports", "--from", "昨日"])
    assert bad_date.exit_code == 2
    assert "YYYY-MM-DD" in bad_date.stderr

    bad_name = runner.invoke(app, ["ingest", str(docs), "-c", "../x"])
    assert bad_name.exit_code == 1
    assert "コレクション名" in bad_name.stderr

    bad_cfg = tmp_path / "bad.toml"
    bad_cfg.write_text('name = "x"\n[fusion]\nmethod = "borda"\n', encoding="utf-8")
    res = runner.invoke(app, ["ingest", str(docs), "-c", "reports", "--config", str(bad_cfg)])
    assert res.exit_code == 1
    assert "borda" in res.stderr


def test_a_search_that_finds_nothing_says_what_to_try(docs, tmp_path):
    """The zero-hit suggestion on the terminal: what was tried, tips and rewordings."""
    cfg = tmp_path / "bm25.toml"
    cfg.write_text('[[axes]]\nname = "bm25"\nmode = "bm25"\nweight = 1.0\n', encoding="utf-8")
    assert (
        runner.invoke(app, ["ingest", str(docs), "-c", "kw", "--config", str(cfg)]).exit_code == 0
    )
    human = runner.invoke(app, ["search", "宇宙ロケットの打ち上げ日程を知りたい", "-c", "kw"])
    assert human.exit_code == 0, human.output
    assert "0件" in human.stdout and "言い換えの例" in human.stdout, human.stdout
    assert "宇宙ロケット" in human.stdout.split("言い換えの例")[1]
