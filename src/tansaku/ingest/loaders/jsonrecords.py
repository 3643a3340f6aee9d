"""JSON Lines (``.jsonl``) and JSON (``.json``): one document per object.

``[ingest.json] fields`` maps field names to key paths (see :mod:`keypath`):

* ``flavorText = "flavorText"`` → field ``flavorText`` (chunked if long: ``:0``, ``:1``...);
* ``"effect_{n}" = "effects[]"`` → fields ``effect_1``, ``effect_2``... (n from 1);
* ``qa_question = "qa[].question"`` → records ``{doc}:qa_question:1``, ``:2``... (a list
  path into a plain field name numbers its items from 1; items are not chunked).

``combined = [paths]`` (or ``true``: every mapped text) → field ``combined``. Without
``fields``, the object's string values are joined into ``body``. A BEIR corpus (file
``corpus.jsonl``, or objects with ``_id`` and ``text`` when no fields are mapped) is loaded by
:mod:`beir`. A ``.json`` file holds one object (doc id = the file's), a list of objects, or
JSON Lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import (
    SHORT_VALUE,
    LoadFailure,
    LoadResult,
    base_metadata,
    canonical_key,
    chunked,
    decode,
    field_records,
    item_record,
    set_metadata,
    source_type,
)
from tansaku.ingest.loaders.beir import beir_records, is_beir_file, is_beir_object
from tansaku.ingest.loaders.keypath import first_scalar, is_list_path, resolve, to_text
from tansaku.ingest.loaders.sections import BODY_FIELD
from tansaku.ingest.loaders.settings import IngestSettings, JsonSettings
from tansaku.ingest.sources import SourceFile
from tansaku.records import Record

DEFAULT_SOURCE_TYPE = "record"
COMBINED_FIELD = "combined"
DEFAULT_ID_KEYS = ("id", "_id")
DEFAULT_TITLE_KEYS = ("name", "title")

# (where for errors, "N行目" / "N件目" label, fallback doc id, the object)
Item = tuple[str, str, str, Any]


class _ObjectLoader:
    def __init__(self, source: SourceFile, config: CollectionConfig, settings: IngestSettings):
        self.source = source
        self.config = config
        self.settings: JsonSettings = settings.json
        self.beir_file = is_beir_file(source.path)
        self.type = source_type(self.settings.source_type, config, DEFAULT_SOURCE_TYPE)
        self.seen: dict[str, str] = {}
        self.ingest = settings

    def _doc_id(self, obj: Mapping[str, Any], label: str, fallback: str) -> tuple[str, str]:
        """``(doc id, "")`` or ``("", reason)``."""
        keys = (self.settings.id_key,) if self.settings.id_key else DEFAULT_ID_KEYS
        value = next((v for k in keys if (v := first_scalar(obj, k)) is not None), None)
        if value is None:
            if self.settings.id_key:
                return "", f"{label}に ID(キー「{self.settings.id_key}」)がありません"
            return fallback, ""
        if isinstance(value, float):
            return "", f"{label}の ID は文字列か整数にしてください(現在: {value})"
        return str(value).strip(), ""

    def _metadata(
        self, obj: Mapping[str, Any], doc_id: str, where: str, errors: list[LoadError]
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if self.settings.metadata_keys:
            for key, path in self.settings.metadata_keys:
                values = [v for v in resolve(obj, path) if v is not None and v != ""]
                value = values if is_list_path(path) else (values[0] if values else None)
                set_metadata(meta, key, value, errors, where)
        elif not self.settings.fields:
            for key, value in obj.items():
                if isinstance(value, str | int | float) and len(str(value)) <= SHORT_VALUE:
                    set_metadata(meta, key, value, [], where)
                    alias = canonical_key(key)
                    if alias and alias != "title":
                        set_metadata(meta, alias, value, [], where)
        keys = (self.settings.title_key,) if self.settings.title_key else DEFAULT_TITLE_KEYS
        title = next((str(v) for k in keys if (v := first_scalar(obj, k)) is not None), doc_id)
        return base_metadata(
            self.source, title=title.strip() or doc_id, source_type=self.type, extra=meta
        )

    def _mapped(self, obj: Mapping[str, Any], doc_id: str, meta: dict[str, Any]) -> list[Record]:
        records: list[Record] = []
        texts: list[str] = []
        for name, path in self.settings.fields:
            values = [to_text(v) for v in resolve(obj, path)]
            if "{n}" in name:
                for n, text in enumerate(values, start=1):
                    field = name.replace("{n}", str(n))
                    records.extend(field_records(doc_id, field, chunked(text, self.config), meta))
            elif is_list_path(path):
                for n, text in enumerate(values, start=1):
                    rec = item_record(doc_id, name, n, text, meta)
                    records.extend([rec] if rec else [])
            else:
                joined = "\n".join(t for t in values if t)
                records.extend(field_records(doc_id, name, chunked(joined, self.config), meta))
            texts.extend(t for t in values if t)
        combined = self.settings.combined
        if combined:
            if not isinstance(combined, bool):
                texts = [t for p in combined for t in (to_text(v) for v in resolve(obj, p)) if t]
            records.extend(
                field_records(doc_id, COMBINED_FIELD, chunked("\n".join(texts), self.config), meta)
            )
        return records

    def _body(self, obj: Mapping[str, Any], doc_id: str, meta: dict[str, Any]) -> list[Record]:
        id_keys = (self.settings.id_key,) if self.settings.id_key else DEFAULT_ID_KEYS
        parts = [
            to_text(v) for k, v in obj.items() if k not in id_keys and isinstance(v, str | list)
        ]
        body = "\n".join(p for p in parts if p)
        return field_records(doc_id, BODY_FIELD, chunked(body, self.config), meta)

    def records(self, item: Item, errors: list[LoadError]) -> list[Record]:
        where, label, fallback, obj = item
        if not isinstance(obj, Mapping):
            errors.append(LoadError(where, f"{label}が JSON オブジェクトではありません"))
            return []
        if self.beir_file or (not self.settings.fields and is_beir_object(obj)):
            result = beir_records(obj, self.source, self.config, self.ingest, label)
            if isinstance(result, LoadError):
                errors.append(LoadError(where, result.reason))
                return []
            return self._unique(result, where, label, errors)
        doc_id, problem = self._doc_id(obj, label, fallback)
        if problem:
            errors.append(LoadError(where, problem + "。読み込みません"))
            return []
        meta = self._metadata(obj, doc_id, where, errors)
        out = (
            self._mapped(obj, doc_id, meta)
            if self.settings.fields or self.settings.combined
            else self._body(obj, doc_id, meta)
        )
        if not out:
            errors.append(LoadError(where, f"{label}に検索できるテキストがありません"))
        return self._unique(out, where, label, errors)

    def _unique(
        self, records: list[Record], where: str, label: str, errors: list[LoadError]
    ) -> list[Record]:
        if not records:
            return []
        doc_id = records[0].doc_id
        if doc_id in self.seen:
            errors.append(
                LoadError(
                    where,
                    f"{label}の ID「{doc_id}」は{self.seen[doc_id]}と"
                    "重複しています。読み込みません",
                )
            )
            return []
        self.seen[doc_id] = label
        return records


def _lines(source: SourceFile, text: str, errors: list[LoadError]) -> Iterator[Item]:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where, label = f"{source.path}:{number}", f"{number}行目"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(
                LoadError(where, f"{label}のJSONが不正です: {exc.msg}({exc.colno}文字目)")
            )
            continue
        yield where, label, f"{source.doc_prefix}#{number}", obj


def _document(source: SourceFile, text: str, records_key: str | None) -> list[Item] | None:
    """Items of a ``.json`` file, or ``None`` when it is JSON Lines under a ``.json`` name."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            return None
        raise LoadFailure(
            f"JSONが不正です({exc.lineno}行目 {exc.colno}文字目): {exc.msg}"
        ) from None
    if records_key:
        found = [v for v in resolve(data, records_key) if v is not None]
        if not found:
            raise LoadFailure(f"キー「{records_key}」(records_key)がありません")
        data = found if len(found) > 1 else found[0]
    if isinstance(data, Mapping):
        return [(str(source.path), "オブジェクト", source.doc_prefix, data)]
    if isinstance(data, list):
        return [
            (f"{source.path}#{i}", f"{i}件目", f"{source.doc_prefix}#{i}", obj)
            for i, obj in enumerate(data, start=1)
        ]
    raise LoadFailure("JSON の最上位はオブジェクトかオブジェクトのリストにしてください")


def load_json(
    source: SourceFile, data: bytes, config: CollectionConfig, settings: IngestSettings
) -> LoadResult:
    text = decode(data)
    errors: list[LoadError] = []
    items: list[Item] | None = None
    if source.path.suffix.lower() == ".json":
        items = _document(source, text, settings.json.records_key)
    if items is None:
        items = list(_lines(source, text, errors))
    if not items:
        if errors:
            return LoadResult((), tuple(errors))
        raise LoadFailure("レコードがありません(空のリストです)")
    loader = _ObjectLoader(source, config, settings)
    records = [r for item in items for r in loader.records(item, errors)]
    return LoadResult(tuple(records), tuple(errors))


__all__ = ["load_json"]
