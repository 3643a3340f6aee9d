"""``tansaku ingest --no-combined`` (``[ingest] combined = false``): no record of the field
``combined`` is written, and a re-ingest with it removes the combined records stored before;
``--combined`` brings them back. The choice is kept in the collection's config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.cli.main import app
from tansaku.errors import ConfigError
from tansaku.ingest.loaders import ingest_settings
from tansaku.testing import HashEmbedder

runner = CliRunner()
NOTES = Path(__file__).resolve().parents[2] / "examples" / "notes"
CONFIG = """name = "notes"

[[axes]]
name = "material"
fields = ["materials_methods"]
mode = "bm25"

[[axes]]
name = "whole"
fields = ["combined"]
mode = "bm25"

[ingest.markdown]
fields = { materials_methods = ["材料", "方法"], purpose = ["目的"], results = ["結果", "考察"] }
whole_field = "combined"
"""


def fields(home: Path) -> dict[str, int]:
    with tansaku.connect(home, embedder=HashEmbedder(16)) as ts:
        rows = ts.collection("notes").store.scan("default")
    out: dict[str, int] = {}
    for row in rows:
        out[row.record.field] = out.get(row.record.field, 0) + 1
    return out


def ingest(home: Path, *args: str) -> dict[str, object]:
    note = NOTES / "note-01-silica-sol-gel-dipcoat.md"
    done = runner.invoke(
        app, ["ingest", str(note), "-c", "notes", "--home", str(home), "--json", *args]
    )
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_no_combined_writes_and_keeps_no_combined_records(tmp_path: Path):
    home = tmp_path / "ws"
    config = tmp_path / "notes.toml"
    config.write_text(CONFIG, encoding="utf-8")
    ingest(home, "--config", str(config))
    before = fields(home)
    assert before["combined"] >= 1 and before["materials_methods"] >= 1

    report = ingest(home, "--no-combined")
    assert report["deleted"] == before["combined"]
    after = fields(home)
    assert "combined" not in after
    assert after["materials_methods"] == before["materials_methods"]
    with tansaku.connect(home, embedder=HashEmbedder(16)) as ts:
        assert ts.collection("notes").config.ingest["combined"] is False
    ingest(home)  # the setting stays
    assert "combined" not in fields(home)

    ingest(home, "--combined")
    assert fields(home) == before


def test_the_setting_must_be_true_or_false():
    assert ingest_settings({}).combined is True
    assert ingest_settings({"combined": False}).combined is False
    with pytest.raises(ConfigError, match="combined は true か false"):
        ingest_settings({"combined": "no"})
