from __future__ import annotations

import pytest

from tansaku.config import AxisMode, CollectionConfig, FusionMethod, config_from_dict, load_config
from tansaku.errors import ConfigError
from tansaku.files import dump_toml

NOTES = """
name = "notes"
source_type = "lab_note"

[[axes]]
name = "material"
fields = ["materials_methods"]
mode = "bm25"
weight = 0.4

[[axes]]
name = "method"
fields = ["materials_methods"]
mode = "dense"
weight = 0.3

[[axes]]
name = "combined"
fields = ["combined"]
mode = "dense"
weight = 0.3

[fusion]
method = "rrf"
k = 30

[ingest.markdown]
fields = { materials_methods = ["材料", "方法"] }
whole_field = "combined"
"""


def test_load_config_from_toml(tmp_path):
    p = tmp_path / "notes.toml"
    p.write_text(NOTES, encoding="utf-8")
    cfg = load_config(p)
    assert [a.name for a in cfg.axes] == ["material", "method", "combined"]
    assert cfg.axes[0].mode is AxisMode.BM25
    assert cfg.axes[0].fields == ("materials_methods",)
    assert cfg.fusion.method is FusionMethod.RRF and cfg.fusion.k == 30
    assert cfg.ingest["markdown"]["fields"]["materials_methods"] == ["材料", "方法"]


def test_config_round_trips_through_toml(tmp_path):
    p = tmp_path / "notes.toml"
    p.write_text(NOTES, encoding="utf-8")
    cfg = load_config(p)
    again = tmp_path / "again.toml"
    again.write_text(dump_toml(cfg.to_dict()), encoding="utf-8")
    assert load_config(again) == cfg


def test_default_config_is_linear_equal_thirds():
    cfg = CollectionConfig(name="x")
    assert cfg.fusion.method is FusionMethod.LINEAR
    assert [(a.mode, a.weight) for a in cfg.axes] == [
        (AxisMode.BM25, pytest.approx(1 / 3)),
        (AxisMode.DENSE, pytest.approx(1 / 3)),
        (AxisMode.BIGRAM, pytest.approx(1 / 3)),
    ]


def test_bigram_mode_round_trips_through_toml_dicts():
    cfg = CollectionConfig(name="x")
    again = config_from_dict(cfg.to_dict())
    assert again.axes == cfg.axes
    with pytest.raises(ConfigError, match="bm25, dense, bigram"):
        config_from_dict({"name": "x", "axes": [{"name": "a", "mode": "trigram"}]})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "x", "axes": [{"name": "a", "mode": "fuzzy"}]}, "fuzzy"),
        ({"name": "x", "fusion": {"method": "borda"}}, "borda"),
        ({"name": "x", "axis": []}, "不明なキー"),
        ({"name": "x", "search": {"top_k": 0}}, "top_k"),
        ({"name": "x", "axes": []}, "検索軸"),
        ({"name": "x", "axes": [{"mode": "bm25"}]}, "name"),
        ({"name": "x", "axes": [{"name": "a", "mode": "bm25", "weight": "重い"}]}, "weight"),
        ({"name": "x", "axes": [1]}, r"\[\[axes\]\]"),
        ({}, "name"),
    ],
)
def test_bad_config_names_the_problem(data, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict(data)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="見つかりません"):
        load_config(tmp_path / "nope.toml")
