"""The CLI's limits and messages, through typer's runner with the deterministic embedder:
invalid options exit with 2 and a Japanese message, nothing from outside reaches the terminal
raw, the date filter is shown, and unexpected errors are one line unless --debug."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import tansaku
from tansaku.cli import main as cli
from tansaku.cli import render
from tansaku.testing import HashEmbedder

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()
HOSTILE_TITLE = "冷蔵庫\x1b[2J\x1b]0;pwned\x07の\u202e故障"
HOSTILE_TEXT = "朝の仕込みで冷蔵庫の故障が発覚\x1b[31m赤字\x1b[0m\x9b1;1H\x08した。"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = tmp_path_factory.mktemp("cli-limits")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest(
            [EXAMPLES / "cards" / "cards.jsonl"],
            collection="cards",
            config=EXAMPLES / "configs" / "cards.toml",
        )
        ts.ingest_records(
            [
                tansaku.Record(
                    id=f"r{i}:body",
                    doc_id=f"r{i}",
                    field="body",
                    text=text,
                    metadata={"date": day, "store": store, "title": title},
                )
                for i, (day, store, title, text) in enumerate(
                    [
                        ("2025-12-10", "新宿店\x1b[1m", HOSTILE_TITLE, HOSTILE_TEXT),
                        ("2025-12-10", "渋谷店", "クレーム", "料理の温度が低いとのクレーム"),
                        ("2025-12-09", "新宿店", "遅延", "ランチの提供が遅いとのご指摘"),
                    ]
                )
            ],
            collection="reports",
        )
    return home


@pytest.fixture(autouse=True)
def _fake_embedder(home, monkeypatch):
    def connect(_home: Path | None, *, create: bool = True) -> tansaku.Tansaku:
        return tansaku.connect(home, embedder=HashEmbedder(32), create=create)

    monkeypatch.setattr(cli, "_connect", connect)


def _run(*args: str, **kw):
    return runner.invoke(cli.app, list(args), **kw)


def _raw(text: str) -> list[str]:
    """The unsafe characters in ``text`` (what must never reach a terminal)."""
    return [c for c in text if render._UNSAFE.match(c)]


def test_escape_sequences_not_echoed(home):
    human = _run("search", "冷蔵庫の故障", "-c", "reports", "--team", "default")
    assert human.exit_code == 0, human.output
    assert _raw(human.stdout) == []
    assert "\\x1b[2J" in human.stdout and "\\u202e" in human.stdout  # visible instead
    assert "\\x1b[31m赤字" in human.stdout and "\\x9b1;1H" in human.stdout

    as_json = _run("search", "冷蔵庫の故障", "-c", "reports", "--json")
    assert as_json.exit_code == 0
    assert _raw(as_json.stdout) == []  # C0 by json.dumps, C1 and bidi by json_safe
    hit = next(h for h in json.loads(as_json.stdout)["hits"] if h["doc_id"] == "r0")
    assert hit["text"] == HOSTILE_TEXT and hit["metadata"]["title"] == HOSTILE_TITLE

    query = _run("search", "冷蔵庫\x1b[2J", "-c", "reports")
    assert query.exit_code == 2 and "制御文字(U+001B)" in query.stderr
    assert _raw(query.stderr) == []

    name = _run("search", "冷蔵庫", "-c", "x\x1b[2Jy")  # echoed in the error message
    assert name.exit_code != 0 and _raw(name.stderr) == [] and "\\x1b" in name.stderr


def test_render_helpers():
    console = Console(file=io.StringIO(), width=200)
    console.print(render.safe("[bold]x\x1b[0m[/]"))
    assert console.file.getvalue() == "[bold]x\\x1b[0m[/]\n"  # markup shown, ESC visible
    assert render.inline("a\nb\t c\x07") == "a b c\\x07"
    raw = json.dumps({"t": "a\x9bb\u202ec\x1b"}, ensure_ascii=False)
    assert json.loads(render.json_safe(raw)) == {"t": "a\x9bb\u202ec\x1b"}
    assert _raw(render.json_safe(raw)) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--min-score", "nan"), "min_score は有限の数"),
        (("--min-score", "inf"), "min_score は有限の数"),
        (("--field", "nosuch"), "フィールド「nosuch」"),
        (("--team", "a/b"), "チーム名「a/b」は使えません"),
        (("--where", "mana=3"), "メタデータのキー「mana」"),
        (("--where", "cost=たくさん"), "整数"),
        (("--where", "cost"), "キー=値"),
        (("--axis-query", "疾走"), "軸の名前=検索文"),
        (("--axis-query", "nope=疾走"), "使える軸: effect_keyword"),
    ],
)
def test_invalid_options_exit_2_with_a_japanese_message(args, message):
    res = _run("search", "ダメージ", "-c", "cards", *args)
    assert res.exit_code == 2, res.output
    assert message in res.stderr.replace("\n", "")
    assert "Traceback" not in res.output


def test_unknown_field_lists_the_valid_fields():
    res = _run("search", "ダメージ", "-c", "cards", "--field", "nosuch")
    assert "使えるフィールド: combined, effect_1" in res.stderr.replace("\n", "")


def test_query_over_length_cap_exits_2():
    res = _run("search", "ダメージ" * 300, "-c", "cards")
    assert res.exit_code == 2 and "上限 1,000文字" in res.stderr.replace("\n", "")


def test_where_cost_equals_int_in_the_cli():
    res = _run("search", "ダメージ", "-c", "cards", "--where", "cost=3", "-k", "50", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["hits"] and {h["metadata"]["cost"] for h in data["hits"]} == {3}
    human = _run("search", "ダメージ", "-c", "cards", "--where", "cost<=3", "--where", "cost>=2")
    assert human.exit_code == 0 and "条件: cost<=3, cost>=2" in human.stdout


def test_plan_shows_date_filter_in_the_cli():
    args = ("search", "昨日のクレーム", "-c", "reports", "--now", "2025-12-11")
    human = _run(*args)
    assert human.exit_code == 0, human.output
    assert "日付: 2025-12-10 〜 2025-12-10(「昨日」から)" in human.stdout
    plan = json.loads(_run(*args, "--json").stdout)["plan"]
    assert plan["date_filter"] == {
        "from": "2025-12-10",
        "to": "2025-12-10",
        "source": "query",
        "expression": "昨日",
    }
    given = _run(*args, "--from", "2025-12-09", "--to", "2025-12-09")
    given_out = given.stdout.replace("\n", "")  # rich wraps at 80 columns off a terminal
    assert "日付: 2025-12-09 〜 2025-12-09(指定)" in given_out
    assert "「昨日」(2025-12-10 〜 2025-12-10)は日付の指定があるため使いませんでした" in given_out
    cards = _run("search", "昨日のダメージ", "-c", "cards", "--now", "2025-12-11")
    assert "日付のある記録がないため使いませんでした" in cards.stdout.replace("\n", "")


def _boom(*_args, **_kwargs):
    raise RuntimeError("ディスクが\n壊れました")


def test_unexpected_error_no_traceback_without_debug(monkeypatch):
    monkeypatch.setattr(cli, "_connect", _boom)
    monkeypatch.delenv("TANSAKU_DEBUG", raising=False)
    res = _run("search", "ダメージ", "-c", "cards")
    assert res.exit_code == 1
    assert res.exception is None or isinstance(res.exception, SystemExit)
    line = res.stderr.strip()
    assert "\n" not in line  # one line
    assert "予期しないエラー" in line and "RuntimeError: ディスクが 壊れました" in line
    assert "--debug" in line
    assert "Traceback" not in res.output


def test_unexpected_error_in_a_registered_subcommand(monkeypatch):
    import tansaku.cli.tables as tables_cli

    monkeypatch.setattr(tables_cli, "_open", _boom)
    res = _run("tables")
    assert res.exit_code == 1
    assert "RuntimeError" in res.stderr and "Traceback" not in res.output


def test_debug_option_and_env_keep_the_traceback(monkeypatch):
    monkeypatch.setattr(cli, "_connect", _boom)
    res = _run("--debug", "search", "ダメージ", "-c", "cards")
    assert isinstance(res.exception, RuntimeError)  # re-raised: Python prints the traceback
    env = _run("search", "ダメージ", "-c", "cards", env={"TANSAKU_DEBUG": "1"})
    assert isinstance(env.exception, RuntimeError)


_CRASHING_CLI = """
import sys
import tansaku.cli.main as cli

def boom(*args, **kwargs):
    raise KeyError("設定")

cli._connect = boom
sys.argv = ["tansaku", *sys.argv[1:]]
cli.main()
"""


@pytest.mark.e2e
def test_unexpected_error_in_a_real_process(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "TANSAKU_HOME": str(tmp_path), "PYTHONUTF8": "1"}
    env.pop("TANSAKU_DEBUG", None)

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-c", _CRASHING_CLI, *args]
        return subprocess.run(
            cmd, capture_output=True, text=True, encoding="utf-8", env={**env, **extra}
        )

    plain = run("search", "ダメージ", "-c", "cards")
    assert plain.returncode == 1
    assert plain.stderr.count("\n") == 1 and "KeyError: '設定'" in plain.stderr
    assert "Traceback" not in plain.stderr
    debug = run("--debug", "search", "ダメージ", "-c", "cards")
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "KeyError" in debug.stderr
    env_debug = run("search", "ダメージ", "-c", "cards", TANSAKU_DEBUG="1")
    assert "Traceback" in env_debug.stderr


def test_a_team_with_no_records_is_told_to_ingest_not_to_rephrase():
    res = _run("search", "ダメージ", "-c", "cards", "--team", "nobody")
    assert res.exit_code == 0, res.output
    text = res.stdout.replace("\n", "")
    assert "チーム「nobody」のデータがまだありません" in text and "tansaku ingest" in text
    assert "言い換える" not in text


def test_the_ingest_summary_counts_records_per_field(tmp_path):
    """The design's namespace breakdown (effect_1=…, qa_question=…) on stdout and in --json."""
    args = ["ingest", str(EXAMPLES / "cards" / "cards.jsonl"), "-c", "cards2"]
    conf = ["--config", str(EXAMPLES / "configs" / "cards.toml")]
    res = _run(*args, *conf, "--json")
    assert res.exit_code == 0, res.output
    fields = json.loads(res.stdout)["by_field"]
    assert fields["effect_1"] == 60 and fields["combined"] == 60 and fields["qa_question"] > 0
    again = _run(*args, *conf)
    assert "フィールド別の記録数: combined 60 / effect_1 60" in again.stdout.replace("\n", "")
