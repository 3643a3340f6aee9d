"""run_eval end to end on tiny Japanese data, with the hash embedder (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tansaku
from tansaku.errors import CollectionNotFound, ConfigError
from tansaku.eval import (
    METRIC_KEYS,
    EvalDataError,
    eval_config_from_dict,
    load_dataset,
    run_eval,
    write_report,
)
from tansaku.records import Record, record_id
from tansaku.testing import HashEmbedder


@pytest.fixture
def ts(tmp_path: Path):
    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32)) as client:
        yield client


def test_beir_default_configs_and_cache_reuse(ts, beir_dir: Path) -> None:
    ds = load_dataset(beir_dir)
    report = run_eval(ts, ds, measure_embedding=False)
    data = report.to_dict()
    assert data["dataset"] == "mini-ja"
    assert [c["name"] for c in data["configs"]] == ["default", "bm25", "dense", "bigram"]
    for c in data["configs"]:
        assert list(c["metrics"]) == list(METRIC_KEYS)
        assert all(0.0 <= v <= 1.0 for k, v in c["metrics"].items() if not k.startswith("lat"))
    bm25 = report.config("bm25")
    assert bm25.metrics["mrr@10"] == 1.0  # each query shares its key terms with one passage
    assert bm25.rankings["q2"][0] == "d2"
    assert report.points == 5
    assert report.ingest["eval-mini-ja"].inserted == 5
    assert report.query_embed_ms is None
    json.dumps(data)

    again = run_eval(ts, ds, measure_embedding=False)
    ing = again.ingest["eval-mini-ja"]
    assert (ing.embedded, ing.unchanged, ing.inserted) == (0, 5, 0)
    assert again.config("bm25").metrics["ndcg@10"] == bm25.metrics["ndcg@10"]


def test_eval_searches_are_not_logged_as_user_searches(ts, beir_dir: Path) -> None:
    log = ts.workspace.logs_dir / "search_events.jsonl"
    before = log.read_text(encoding="utf-8") if log.exists() else ""
    run_eval(ts, load_dataset(beir_dir), measure_embedding=False)
    after = log.read_text(encoding="utf-8") if log.exists() else ""
    assert after == before


def test_configs_and_query_embedding_timing(ts, beir_dir: Path) -> None:
    confs = [
        eval_config_from_dict({"name": "rrf", "fusion": {"method": "rrf", "k": 10}}),
        eval_config_from_dict({"name": "kw", "axes": [{"name": "b", "mode": "bm25"}]}),
    ]
    report = run_eval(ts, load_dataset(beir_dir), confs)
    assert [c.name for c in report.configs] == ["rrf", "kw"]
    assert report.query_embed_ms is not None and report.query_embed_ms[0] >= 0
    with pytest.raises(ConfigError, match="名前が重複"):
        run_eval(ts, load_dataset(beir_dir), [confs[0], confs[0]])


def test_index_settings_get_their_own_scratch_collection(ts, beir_dir: Path) -> None:
    conf = eval_config_from_dict({"name": "small-chunks", "chunking": {"size": 20, "overlap": 5}})
    report = run_eval(ts, load_dataset(beir_dir), [conf], measure_embedding=False)
    (name,) = report.ingest
    assert name.startswith("eval-mini-ja-") and name == report.configs[0].collection
    assert ts.collection(name).config.chunk_size == 20
    assert report.points > 5  # passages were cut into chunks
    assert set(report.configs[0].rankings["q1"]) <= {"d1", "d2", "d3", "d4", "d5"}


def _cards(path: Path) -> Path:
    rows = [
        {"id": "c1", "name": "吸血公爵", "effects": ["相手のリーダーに1ダメージ。"]},
        {"id": "c2", "name": "旅の吟遊詩人", "effects": ["カードを1枚引く。"]},
        {"id": "c3", "name": "竜の咆哮", "effects": ["お互いのフォロワーすべてに3ダメージ。"]},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _card_config(path: Path) -> Path:
    path.write_text(
        'name = "cards"\n[ingest.json]\nid_key = "id"\ntitle_key = "name"\n'
        'fields = { "effect_{n}" = "effects[]" }\n',
        encoding="utf-8",
    )
    return path


def test_judgements_with_source_ids_and_titles(ts, tmp_path: Path) -> None:
    _cards(tmp_path / "cards.jsonl")
    _card_config(tmp_path / "cards.toml")
    (tmp_path / "j.yaml").write_text(
        "collection: cards\nsource: cards.jsonl\nconfig: cards.toml\nqueries:\n"
        "  - {query: リーダーにダメージ, relevant: [c1]}\n"
        "  - {query: カードを引く, relevant: [旅の吟遊詩人]}\n",
        encoding="utf-8",
    )
    report = run_eval(ts, load_dataset(tmp_path / "j.yaml"), measure_embedding=False)
    assert list(report.ingest) == ["eval-cards"]  # a scratch copy: the user's `cards` untouched
    assert not ts.has_collection("cards")
    default = report.config("default")
    assert default.rankings["q1"][0] == "c1" and default.rankings["q2"][0] == "c2"
    assert default.metrics["r@1"] == 1.0

    (tmp_path / "bad.yaml").write_text(
        "source: cards.jsonl\nconfig: cards.toml\nqueries:\n"
        "  - {query: 破壊, relevant: [c9, 存在しないカード]}\n",
        encoding="utf-8",
    )
    with pytest.raises(
        EvalDataError, match=r"ない文書 ID・タイトルがあります: \['c9', '存在しないカード'\]"
    ):
        run_eval(ts, load_dataset(tmp_path / "bad.yaml"), measure_embedding=False)


def test_judgements_over_an_existing_collection(ts, tmp_path: Path) -> None:
    (tmp_path / "j.csv").write_text("query,relevant\n富士山の高さ,fuji\n", encoding="utf-8")
    ds = load_dataset(tmp_path / "j.csv")
    with pytest.raises(EvalDataError, match="評価するコレクションがわかりません"):
        run_eval(ts, ds, measure_embedding=False)
    from dataclasses import replace

    ds = replace(ds, collection="notes")
    with pytest.raises(CollectionNotFound):
        run_eval(ts, ds, measure_embedding=False)
    texts = {"fuji": "富士山の高さは3776メートル", "biwa": "琵琶湖は滋賀県の湖"}
    ts.ingest_records(
        [Record(id=record_id(k, "body"), doc_id=k, field="body", text=v) for k, v in texts.items()],
        collection="notes",
    )
    report = run_eval(ts, ds, measure_embedding=False)
    assert report.ingest == {}
    assert report.config("default").rankings["q1"][0] == "fuji"
    index_conf = eval_config_from_dict({"name": "k1", "bm25": {"k1": 1.5}})
    with pytest.raises(ConfigError, match="既存のコレクション「notes」"):
        run_eval(ts, ds, [index_conf], measure_embedding=False)


def test_write_report(ts, beir_dir: Path, tmp_path: Path) -> None:
    report = run_eval(ts, load_dataset(beir_dir), measure_embedding=False)
    written = write_report(report, tmp_path / "out")
    names = [f.name for f in written.files]
    assert names[:2] == ["results.md", "results.csv"]
    md = (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    assert "| 設定 | nDCG@10 | R@10 | R@100 | MRR@10 | P@10 | R@1 | 0件率 |" in md
    assert "| bm25 | 1.0000 |" in md
    csv_lines = (tmp_path / "out" / "results.csv").read_text(encoding="utf-8").splitlines()
    assert csv_lines[0] == "config," + ",".join(METRIC_KEYS)
    assert [line.split(",")[0] for line in csv_lines[1:]] == ["default", "bm25", "dense", "bigram"]
    pytest.importorskip("matplotlib")
    assert (tmp_path / "out" / "results.png").read_bytes()[:4] == b"\x89PNG"


def test_chart_is_optional(ts, beir_dir: Path, tmp_path: Path, monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    report = run_eval(ts, load_dataset(beir_dir), measure_embedding=False)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    written = write_report(report, tmp_path / "out")
    assert [f.name for f in written.files] == ["results.md", "results.csv"]
    assert "matplotlib" in written.warnings[0] and "pip install matplotlib" in written.warnings[0]
