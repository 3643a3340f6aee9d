"""Config files under test: per-request overrides, index settings, the default three."""

from __future__ import annotations

from pathlib import Path

import pytest

from tansaku.config import Axis, AxisMode, CollectionConfig, FusionConfig, FusionMethod
from tansaku.errors import ConfigError
from tansaku.eval import default_configs, eval_config_from_dict, load_eval_config


def test_only_what_the_file_sets_is_overridden(tmp_path: Path) -> None:
    p = tmp_path / "rrf.toml"
    p.write_text('name = "rrf-k20"\n[fusion]\nmethod = "rrf"\nk = 20\n', encoding="utf-8")
    conf = load_eval_config(p)
    assert conf.name == "rrf-k20"
    assert conf.request_options() == {"fusion": FusionConfig(method=FusionMethod.RRF, k=20)}
    assert conf.index == {} and conf.index_key() == ""


def test_axes_and_search_keys() -> None:
    conf = eval_config_from_dict(
        {
            "name": "title-heavy",
            "axes": [{"name": "b", "mode": "bm25", "weight": 0.7}, {"name": "d", "mode": "dense"}],
            "search": {"candidates": 200, "group_by_doc": False},
        }
    )
    assert conf.request_options() == {
        "axes": (
            Axis(name="b", mode=AxisMode.BM25, weight=0.7),
            Axis(name="d", mode=AxisMode.DENSE, weight=1.0),
        ),
        "candidates": 200,
        "group_by_doc": False,
    }


def test_functional_weight_is_a_per_request_option() -> None:
    c = eval_config_from_dict({"name": "fw", "query": {"functional_weight": 0.3}})
    assert c.request_options() == {"functional_weight": 0.3}
    assert c.index_key() == ""  # no separate collection
    assert eval_config_from_dict({"name": "plain"}).functional_weight is None


def test_name_defaults_to_the_file_stem(tmp_path: Path) -> None:
    p = tmp_path / "plain.toml"
    p.write_text("[search]\ncandidates = 50\n", encoding="utf-8")
    assert load_eval_config(p).name == "plain"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "x", "query": {"expand": "never"}}, r"\[query\] のうち評価で変えられるのは"),
        ({"name": "x", "ingest": {"loader": "csv"}}, "評価設定に使えないキー"),
        ({"name": "x", "query": {"functional_weight": 2}}, "functional_weight は 0〜1"),
        ({"name": "x", "search": {"top_k": 5}}, "top_k は評価が 100 に固定"),
        ({"name": "x", "fusion": {"method": "sum"}}, "融合方式「sum」は使えません"),
        ({"name": "x", "axes": [{"name": "a", "mode": "sparse"}]}, "検索モード「sparse」"),
        ({"name": " "}, "name が必要です"),
    ],
)
def test_errors(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        eval_config_from_dict(data)


def test_toml_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="見つかりません"):
        load_eval_config(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="TOML が不正です"):
        load_eval_config(bad)


def test_index_settings_make_a_separate_collection_config() -> None:
    conf = eval_config_from_dict({"name": "k1", "bm25": {"k1": 1.2}, "chunking": {"size": 200}})
    assert conf.request_options() == {}
    assert len(conf.index_key()) == 8
    same = eval_config_from_dict({"name": "other", "chunking": {"size": 200}, "bm25": {"k1": 1.2}})
    assert same.index_key() == conf.index_key()
    base = CollectionConfig(name="eval-x", chunk_overlap=40)
    cfg = conf.apply_index(base)
    assert (cfg.bm25_k1, cfg.bm25_b, cfg.chunk_size, cfg.chunk_overlap) == (1.2, 0.4, 200, 40)
    assert cfg.name == "eval-x"


def test_default_configs_are_the_collection_and_its_legs() -> None:
    names = [c.name for c in default_configs(CollectionConfig(name="c"))]
    assert names == ["default", "bm25", "dense", "bigram"]
    cards_like = CollectionConfig(
        name="cards",
        axes=(
            Axis(name="kw", mode=AxisMode.BM25, weight=0.5),
            Axis(name="sem", mode=AxisMode.DENSE, weight=0.3),
            Axis(name="comb", mode=AxisMode.DENSE, weight=0.2),
        ),
    )
    default, bm25, dense = default_configs(cards_like)
    assert default.request_options() == {}
    assert [a.name for a in bm25.axes or ()] == ["kw"]
    assert [a.name for a in dense.axes or ()] == ["sem", "comb"]
    only_bm25 = CollectionConfig(name="c", axes=(Axis(name="kw", mode=AxisMode.BM25),))
    assert [c.name for c in default_configs(only_bm25)] == ["default"]
