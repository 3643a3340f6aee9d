"""A table file (CSV, TSV, JSON Lines, JSON) as the upload form shows it: its columns, its first
rows and a suggested field mapping (:mod:`tansaku.ingest.mapping` checks and saves one).

>>> table = read_table("店舗一覧.csv", data)          # FileProblem: encoding, header, bad JSON
>>> table.columns, table.encoding, suggest_mapping(table)

A file is read as ``tansaku ingest`` reads it (the same decoding: UTF-8 with or without BOM,
UTF-16 by BOM, Shift_JIS (cp932) for CSV/TSV; the same CSV reader). The suggestion looks at
every row (up to :data:`SCAN_ROWS`): the id is a column named like one (``id``, ``*_id``,
``番号``, ``コード``) whose values are unique, else the first column of unique short codes; the
title a column named like one (``名前``, ``タイトル``, ``件名``, ``title``, ``name``,
``店舗名``…; in a CSV/TSV Q&A sheet, else the question column: ``質問``, ``question``…); the
first column whose values read as dates becomes metadata ``date``; prose
columns (long values or sentences; not JSON, links) and the title make the text field
``body``; the other columns become metadata (``店舗`` → ``store``, ``カテゴリ`` →
``category`` …, else under their own name).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import (
    SHORT_VALUE,
    LoadFailure,
    canonical_key,
    decode,
    normalize_date,
)
from tansaku.ingest.loaders.delimited import QUESTION_COLUMNS
from tansaku.ingest.loaders.delimited import _rows as csv_rows  # the loader's own CSV reading
from tansaku.ingest.loaders.settings import ENCODINGS_AUTO

FIELD_NAME = re.compile(r"^[^\s:/#]{1,64}$")  # a record field: no whitespace, : / #
FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "json"}
PREVIEW_ROWS = 5
CELL_CHARS = 200
SCAN_ROWS = 10_000
LONG_TEXT_AVG = 40  # a column whose values average more characters is text to search
ID_MAX_CHARS = 40
BODY_FIELD = "body"
_ID_NAMES = re.compile(r"^(id|no|code|.*[^a-z]id|.*番号|.*コード)$")  # NFKC, lower-cased
_TITLE_NAMES = ("title", "name", "タイトル", "件名", "名称", "名前", "表題", "見出し")
_TITLE_SUFFIXES = ("_name", "_title", "名", "名称", "タイトル")
_NUMBER = re.compile(r"^[+-]?[\d,]+(\.\d+)?$")
_LINK = re.compile(r"^(https?://\S+|[^@\s]+@[^@\s]+\.\w+)$")
_PROSE = re.compile(r"[。、！？!?]")


class FileProblem(LoadError):
    """The file cannot be previewed (or ingested): which file and why, in Japanese."""


@dataclass(frozen=True)
class Table:
    """A table file read whole: its header and rows (cells as text)."""

    name: str
    format: str
    encoding: str
    delimiter: str | None
    columns: list[str]
    rows: list[list[str]]

    @property
    def family(self) -> str:
        """``csv`` (CSV and TSV: ``[ingest.csv]``) or ``json`` (``[ingest.json]``)."""
        return "csv" if self.format in ("csv", "tsv") else "json"

    def head(self, n: int = PREVIEW_ROWS) -> list[list[str]]:
        return [[cell[:CELL_CHARS] for cell in row] for row in self.rows[:n]]


def table_format(name: str) -> str | None:
    return FORMATS.get(PurePath(name).suffix.lower())


def _encoding_of(data: bytes, encoding: str) -> str:
    """The encoding :func:`decode` used for ``data`` (which it has just decoded)."""
    if encoding != ENCODINGS_AUTO:
        return encoding
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "cp932"
    return "utf-8"


def _text(name: str, data: bytes, encoding: str, *, cp932: bool) -> tuple[str, str]:
    try:
        text = decode(data, encoding, allow_cp932=cp932)
    except LoadFailure as exc:
        raise FileProblem(name, exc.reason) from None
    return text, _encoding_of(data, encoding)


def _delimited(name: str, fmt: str, text: str, delimiter: str) -> tuple[list[str], list[list[str]]]:
    try:
        rows, _problems = csv_rows(text, delimiter)  # unreadable rows are the loader's to report
    except LoadFailure as exc:
        raise FileProblem(name, exc.reason) from None
    if not rows:
        raise FileProblem(name, "ファイルが空です")
    header = [h.strip() for h in rows[0][1]]
    if not any(header) or all(_NUMBER.match(h) or normalize_date(h) for h in header if h):
        raise FileProblem(
            name, "1行目に見出し(列名)がありません。1行目に列名を書いた表にしてください"
        )
    seen: set[str] = set()
    for h in header:
        if h and h in seen:
            raise FileProblem(name, f"見出し「{h}」が重複しています。列名を変えてください")
        seen.add(h)
    if len(rows) == 1:
        raise FileProblem(name, "見出し行だけでデータ行がありません")
    keep = [i for i, h in enumerate(header) if h]
    body = [
        [cells[i].strip() if i < len(cells) else "" for i in keep]
        for _, cells in rows[1 : SCAN_ROWS + 1]
    ]
    return [header[i] for i in keep], body


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, ensure_ascii=False)


def _objects(name: str, fmt: str, text: str) -> list[dict[str, Any]]:
    if fmt == "json":
        try:
            data = json.loads(text)
        except RecursionError:
            raise FileProblem(name, "JSON の入れ子が深すぎます") from None
        except json.JSONDecodeError as exc:
            if not (exc.msg == "Extra data" and text.lstrip().startswith("{")):
                raise FileProblem(
                    name, f"JSONが不正です({exc.lineno}行目 {exc.colno}文字目): {exc.msg}"
                ) from None
        else:
            items = data if isinstance(data, list) else [data]
            for i, obj in enumerate(items, start=1):
                if not isinstance(obj, dict):
                    raise FileProblem(name, f"{i}件目が JSON オブジェクトではありません")
            return items
    out: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except RecursionError:
            raise FileProblem(name, f"{number}行目の JSON の入れ子が深すぎます") from None
        except json.JSONDecodeError as exc:
            raise FileProblem(
                name, f"{number}行目のJSONが不正です: {exc.msg}({exc.colno}文字目)"
            ) from None
        if not isinstance(obj, dict):
            raise FileProblem(name, f"{number}行目が JSON オブジェクトではありません")
        out.append(obj)
        if len(out) >= SCAN_ROWS:
            break
    return out


def read_table(
    name: str, data: bytes, *, encoding: str = ENCODINGS_AUTO, delimiter: str | None = None
) -> Table:
    """``data``, the bytes of the file ``name`` (.csv, .tsv, .jsonl, .json), as a table;
    ``encoding`` / ``delimiter`` as in ``[ingest.csv]``. Raises :class:`FileProblem`."""
    fmt = table_format(name)
    if fmt is None:
        raise FileProblem(
            name, "表のファイルではありません(.csv, .tsv, .jsonl, .json のいずれかにしてください)"
        )
    if fmt in ("csv", "tsv"):
        text, used = _text(name, data, encoding, cp932=True)
        delim = delimiter or ("\t" if fmt == "tsv" else ",")
        columns, rows = _delimited(name, fmt, text, delim)
        return Table(name, fmt, used, delim, columns, rows)
    text, used = _text(name, data, ENCODINGS_AUTO, cp932=False)
    objects = _objects(name, fmt, text)
    if not objects:
        raise FileProblem(name, "レコードがありません(空のリストです)")
    columns = list(dict.fromkeys(k for obj in objects for k in obj))
    rows = [[_cell(obj.get(c)) for c in columns] for obj in objects]
    return Table(name, fmt, used, None, columns, rows)


# --- the suggestion ------------------------------------------------------------------------


def _norm(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip().lower()


def _values(table: Table, i: int) -> list[str]:
    return [row[i] for row in table.rows if i < len(row) and row[i]]


def _is_id(values: list[str], n_rows: int) -> bool:
    return len(values) == n_rows and len(set(values)) == n_rows


def _guess_id(table: Table) -> str | None:
    n = len(table.rows)
    for i, col in enumerate(table.columns):
        if _ID_NAMES.match(_norm(col)) and _is_id(_values(table, i), n):
            return col
    for i, col in enumerate(table.columns):
        values = _values(table, i)
        if (
            _is_id(values, n)
            and n > 1
            and max(len(v) for v in values) <= ID_MAX_CHARS
            and not any(c.isspace() for v in values for c in v)
            and not all(normalize_date(v) for v in values)
        ):
            return col
    return None


def _guess_title(table: Table, taken: set[str]) -> str | None:
    candidates = [c for c in table.columns if c not in taken]
    for col in candidates:
        if _norm(col) in _TITLE_NAMES:
            return col
    for col in candidates:
        if _norm(col).endswith(_TITLE_SUFFIXES):
            return col
    if table.family == "csv":  # JSON: a title is no text field, the question must stay one
        for col in candidates:
            if _norm(col) in QUESTION_COLUMNS:  # a Q&A sheet: the question, also in the text
                return col
    return None


def _is_dates(values: list[str]) -> bool:
    return bool(values) and sum(normalize_date(v) is not None for v in values) >= 0.8 * len(values)


def _share(values: list[str], test: Any) -> float:
    return sum(1 for v in values if test(v)) / len(values)


def _is_text(values: list[str]) -> bool:
    """Prose to search: long values, or sentences (。、!?) — not JSON, links or addresses."""
    if not values or _share(values, lambda v: v[:1] in "[{" or _LINK.match(v)) >= 0.8:
        return False
    avg = sum(len(v) for v in values) / len(values)
    if avg > LONG_TEXT_AVG or max(len(v) for v in values) > SHORT_VALUE:
        return True
    return avg >= 10 and _share(values, _PROSE.search) >= 0.3


def suggest_mapping(table: Table) -> dict[str, Any]:
    """A MAPPING for ``table`` (see the module docstring for the rules)."""
    id_col = _guess_id(table)
    title = _guess_title(table, {id_col} if id_col else set())
    text: list[str] = [title] if title else []
    metadata: dict[str, str] = {}
    for i, col in enumerate(table.columns):
        values = _values(table, i)
        if col in (id_col, title) or not values:
            continue
        if "date" not in metadata and _is_dates(values):
            metadata["date"] = col
        elif _is_text(values):
            text.append(col)
        else:
            key = canonical_key(col)
            key = col if key in (None, "title", "date") or key in metadata else key
            if key not in metadata:
                metadata[key] = col
    if not [c for c in text if c != title]:  # nothing long besides the title: short columns too
        rest = [c for c in table.columns if c not in (id_col, title)]
        text = [title] if title else []
        text += [c for c in rest if c not in metadata.values()] or rest
    return {
        "id_column": id_col,
        "title_column": title,
        "text_fields": _text_fields(table, text, title),
        "metadata_columns": metadata,
        "source_type": "",
    }


def _text_fields(table: Table, text: list[str], title: str | None) -> dict[str, list[str]]:
    """CSV/TSV: one ``body`` field of every text column (the title first). JSON: a field reads
    one key, so each text key is a field of its own (``body`` the first, then the key's name)
    and the title stays the record's title."""
    if table.family == "csv" or not text:
        return {BODY_FIELD: text} if text else {}
    keys = [c for c in text if c != title] or text[:1]
    fields = {BODY_FIELD: [keys[0]]}
    for i, key in enumerate(keys[1:], start=2):
        name = key if FIELD_NAME.match(key) and key not in fields else f"text{i}"
        fields[name] = [key]
    return fields


def preview(table: Table) -> dict[str, Any]:
    """The preview JSON of ``POST /api/ingest/preview`` (without ``current``)."""
    return {
        "format": table.format,
        "encoding": table.encoding,
        "delimiter": table.delimiter,
        "columns": list(table.columns),
        "rows": table.head(),
        "suggested": suggest_mapping(table),
    }


__all__ = [
    "FORMATS",
    "FileProblem",
    "Table",
    "preview",
    "read_table",
    "suggest_mapping",
    "table_format",
]
