from __future__ import annotations

import tomllib

import pytest

from tansaku.errors import ConfigError
from tansaku.ingest.loaders.settings import ingest_settings

NOTES = """
[ingest.markdown]
fields = { materials_methods = ["材料", "方法"], purpose = ["目的"] }
header_keys = { "実験番号" = "experiment_id" }

[ingest.csv]
id_column = "store_id"
text_fields = { description = ["description"], combined = ["store_name", "description"] }
metadata_columns = { date = "日付", store = "店舗" }
encoding = "cp932"

[ingest.json]
fields = { "effect_{n}" = "effects[]", qa_question = "qa[].question" }
combined = true
metadata_keys = ["class", "cost"]
"""


def test_parse_full_table() -> None:
    settings = ingest_settings(tomllib.loads(NOTES)["ingest"])
    assert settings.markdown.fields == (
        ("materials_methods", ("材料", "方法")),
        ("purpose", ("目的",)),
    )
    assert settings.markdown.whole_field == "combined"  # default once fields are mapped
    assert settings.markdown.header_keys == {"実験番号": "experiment_id"}
    assert settings.docx == settings.markdown  # docx falls back to markdown
    assert settings.csv.metadata_columns == (("date", "日付"), ("store", "店舗"))
    assert settings.csv.encoding == "cp932"
    assert settings.json.combined is True
    assert settings.json.metadata_keys == (("class", "class"), ("cost", "cost"))


def test_defaults() -> None:
    settings = ingest_settings({})
    assert settings.markdown.fields == ()
    assert settings.markdown.whole_field == ""
    assert settings.csv.id_column is None
    assert settings.json.combined is False


@pytest.mark.parametrize(
    "ingest,needle",
    [
        ({"pdfs": {}}, "[ingest] に不明なキーがあります"),
        ({"markdown": {"field": {}}}, "[ingest.markdown] に不明なキーがあります"),
        ({"markdown": {"fields": {"a": 3}}}, "文字列のリスト"),
        ({"csv": {"metadata_columns": "date"}}, "metadata_columns"),
        ({"csv": {"encoding": "klingon"}}, "encoding「klingon」"),
        ({"csv": {"delimiter": "::"}}, "delimiter"),
        ({"json": {"fields": {"a": "qa[.question"}}}, "キーパス「qa[.question」"),
        ({"json": {"combined": True}}, "combined = true には fields"),
        ({"json": "x"}, "表(テーブル)"),
    ],
)
def test_invalid(ingest: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        ingest_settings(ingest)
    assert needle in str(info.value)
