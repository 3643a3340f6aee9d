"""Loading BEIR folders and judgement files (YAML / CSV), with Japanese error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tansaku.eval import DatasetKind, EvalDataError, load_dataset


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_beir_folder(beir_dir: Path) -> None:
    ds = load_dataset(beir_dir)
    assert ds.kind is DatasetKind.BEIR
    assert ds.name == "mini-ja"
    assert list(ds.queries) == ["q1", "q2", "q3"]  # q4 has no qrels: BEIR leaves it out
    assert ds.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}  # score 0 dropped
    assert ds.source == beir_dir / "corpus.jsonl"
    assert load_dataset(beir_dir / "corpus.jsonl").queries == ds.queries


def test_beir_errors(beir_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(EvalDataError, match=r"qrels/dev\.tsv がありません"):
        load_dataset(beir_dir, split="dev")
    (beir_dir / "qrels" / "test.tsv").write_text("q1 d1 1\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match="1 行目はタブ区切り 3 列"):
        load_dataset(beir_dir)
    (beir_dir / "qrels" / "test.tsv").write_text("q1\td1\tはい\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match="score が数値ではありません"):
        load_dataset(beir_dir)
    (beir_dir / "queries.jsonl").write_text('{"_id": "q1", "text": \n', encoding="utf-8")
    with pytest.raises(EvalDataError, match="1 行目が JSON として読めません"):
        load_dataset(beir_dir)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvalDataError, match=r"corpus\.jsonl がありません"):
        load_dataset(empty)
    with pytest.raises(EvalDataError, match="データセットが見つかりません"):
        load_dataset(tmp_path / "nowhere.txt")
    with pytest.raises(EvalDataError, match="評価データとして読めません"):
        load_dataset(_write(tmp_path / "x.txt", "x"))


YAML = """\
name: mini
collection: cards
source: data/cards.jsonl
queries:
  - query: 継続ダメージ
    relevant: [10100610, "10300330"]
    note: 毎ターン
  - query: 守護無視
    relevant: {10200710: 2, 10400710: 1, 10500210: 0}
  - query: 継続ダメージ
    relevant: [10500510]
    note: 追加
"""


def test_yaml_judgements(tmp_path: Path) -> None:
    _write(tmp_path / "data" / "cards.jsonl", "{}\n")
    ds = load_dataset(_write(tmp_path / "j.yaml", YAML))
    assert ds.kind is DatasetKind.JUDGEMENTS
    assert ds.name == "mini" and ds.collection == "cards"
    assert ds.source == tmp_path / "data" / "cards.jsonl"  # relative to the YAML file
    assert ds.queries == {"q1": "継続ダメージ", "q2": "守護無視"}  # same query text merges
    assert ds.qrels == {
        "q1": {"10100610": 1, "10300330": 1, "10500510": 1},
        "q2": {"10200710": 2, "10400710": 1},
    }
    assert ds.notes == {"q1": "毎ターン / 追加"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("queries: [\n", "YAML が不正です"),
        ("- a\n- b\n", "マッピングにしてください"),
        ("collection: c\nqueries: []\n", "1 件以上のクエリ"),
        (
            "colection: c\nqueries: [{query: a, relevant: [x]}]\n",
            r"不明なキーがあります: \['colection'\]",
        ),
        ("queries: [{query: a}]\n", "query と relevant が必要です"),
        ("queries: [{query: a, relevant: [x], grade: 1}]\n", "不明なキーがあります"),
        ("queries: [{query: a, relevant: []}]\n", "正解\\(relevant\\)のないクエリ"),
        ("queries: [{query: a, relevant: 3.5}]\n", "relevant は ID のリスト"),
        ("queries: [{query: a, relevant: {x: -1}}]\n", "0 以上の数"),
        ("queries: [{query: '  ', relevant: [x]}]\n", "query が空です"),
        ("queries: [a]\n", "queries 1 件目"),
        (
            "source: none.jsonl\nqueries: [{query: a, relevant: [x]}]\n",
            "source のファイルが見つかりません",
        ),
        ("config: c.toml\nqueries: [{query: a, relevant: [x]}]\n", "config は source と一緒に"),
    ],
)
def test_yaml_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(EvalDataError, match=message):
        load_dataset(_write(tmp_path / "bad.yml", text))


def test_csv_judgements(tmp_path: Path) -> None:
    text = (
        "query,relevant,note\n"
        "継続ダメージ,10100610;10300330,毎ターン\n"
        "守護無視,10200710 10400710|10500210、10600410,\n"
        "\n"
        "継続ダメージ,10500510,\n"
    )
    ds = load_dataset(_write(tmp_path / "cards.csv", text))
    assert ds.name == "cards" and ds.collection is None and ds.source is None
    assert ds.queries == {"q1": "継続ダメージ", "q2": "守護無視"}
    assert ds.qrels["q1"] == {"10100610": 1, "10300330": 1, "10500510": 1}
    assert list(ds.qrels["q2"]) == ["10200710", "10400710", "10500210", "10600410"]
    assert ds.notes == {"q1": "毎ターン"}


def test_csv_errors(tmp_path: Path) -> None:
    with pytest.raises(EvalDataError, match="query と relevant の列が必要です"):
        load_dataset(_write(tmp_path / "a.csv", "question,answer\nx,y\n"))
    with pytest.raises(EvalDataError, match="評価するクエリがありません"):
        load_dataset(_write(tmp_path / "b.csv", "query,relevant\n"))
    with pytest.raises(EvalDataError, match="3 行目: query が空です"):
        load_dataset(_write(tmp_path / "c.csv", "query,relevant\na,x\n,y\n"))


def test_bundled_card_judgements() -> None:
    root = Path(__file__).resolve().parents[2]
    ds = load_dataset(root / "examples" / "eval" / "cards.yaml")
    assert len(ds.queries) == 19
    assert ds.collection == "cards"
    assert ds.source is not None and ds.source.is_file()
    assert ds.config is not None and ds.config.is_file()
    assert ds.qrels["q5"] == ds.qrels["q18"]  # リーダー直接ダメージ = 相手のリーダーにダメージ…
