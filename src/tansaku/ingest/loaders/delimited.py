"""CSV / TSV (``.csv``, ``.tsv``): one document per row.

With ``[ingest.csv]``: ``id_column`` gives the doc id (a row without one is reported and
skipped), ``text_fields`` name the fields (one column → its value; several columns →
``列名: 値`` lines), ``metadata_columns`` the metadata, ``title_column`` the title (else a
column named like a title, else a Q&A sheet's question column: ``質問``, ``question``…).

Without it: every non-empty column goes into field ``body`` as ``列名: 値`` lines; the doc id
comes from a column named ``id`` / ``_id`` / ``*_id`` if there is one, else from the line
number (``{file}#{line}``, which changes when rows are inserted above); every value of at
most 64 characters is also metadata under its column name (and ``日付`` → ``date``,
``店舗`` → ``store``... as well).

A quoted field left open (an unterminated ``"``) is reported at the line where it starts; that
row is dropped and reading goes on from the next line, so the rows after it still load.
"""

from __future__ import annotations

import csv
import re
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
    line_error,
    set_metadata,
    source_type,
)
from tansaku.ingest.loaders.sections import BODY_FIELD
from tansaku.ingest.loaders.settings import CsvSettings, IngestSettings
from tansaku.ingest.sources import SourceFile
from tansaku.records import Record

DEFAULT_SOURCE_TYPE = "table_row"
TITLE_COLUMNS = ("title", "name", "タイトル", "件名", "名称", "名前")
# without a title column, a Q&A sheet's question is the title (it stays in the body too: the
# question and the answer searched as one text beat every split into fields, docs/benchmarks.md)
QUESTION_COLUMNS = ("question", "q", "質問", "問い", "問", "質問内容", "お問い合わせ", "faq")
QUOTE = '"'


class _Lines:
    """The lines of a text from ``start``, for a csv reader that may be restarted anywhere."""

    def __init__(self, lines: list[str], start: int) -> None:
        self.lines = lines
        self.next = start

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.next >= len(self.lines):
            raise StopIteration
        self.next += 1
        return self.lines[self.next - 1]


def _scan_record(lines: list[str], start: int, delimiter: str) -> tuple[bool, int]:
    """Follow the quoting of the record that starts at ``lines[start]`` (as csv does) after the
    csv reader failed on it.

    ``(True, i)``: a quoted field opened on line ``i`` and never closed properly before a later
    line — an unterminated quote that swallowed what followed. ``(False, end)``: the record is
    one readable the lenient way (``"ab"c`` on one line, a field over the size limit...) and
    ends before ``lines[end]``.
    """
    start_field, unquoted, quoted, quote_in_quoted = range(4)
    state, opened = start_field, start
    for i in range(start, len(lines)):
        for ch in lines[i]:
            if state == quoted:
                if ch == QUOTE:
                    state = quote_in_quoted
            elif ch == "\n":
                return False, i + 1
            elif state == start_field:
                if ch == QUOTE:
                    state, opened = quoted, i
                elif ch != delimiter:
                    state = unquoted
            elif state == unquoted:
                if ch == delimiter:
                    state = start_field
            elif ch == QUOTE:  # quote_in_quoted: a doubled quote
                state = quoted
            elif ch == delimiter:
                state = start_field
            elif opened < i:  # "closed" by a quote of a later line: the opening one was stray
                return True, opened
            else:  # "ab"c: the lenient reader keeps the text
                state = unquoted
    return (True, opened) if state == quoted else (False, len(lines))


def _csv_detail(exc: csv.Error) -> str:
    text = str(exc)
    m = re.search(r"field larger than field limit \((\d+)\)", text)
    if m:
        return f"1つの項目が{int(m[1]):,}文字を超えています"
    if "NUL" in text:
        return "NUL文字が含まれています"
    return text


def _unterminated(line: int) -> str:
    return (
        f'{line}行目で始まる引用符(")が閉じられていません。'
        "この行は読み込まず、次の行から読み直します"
    )


def _rows(text: str, delimiter: str) -> tuple[list[tuple[int, list[str]]], list[tuple[int, str]]]:
    """``(starting line number, cells)`` of every non-blank row, the header included, and
    ``(line number, reason)`` of the rows that could not be read.

    Rows are read strictly. A quoted field left open (an unterminated ``"``) would otherwise
    swallow the next rows up to the next quote or the end of the file: it is reported at the
    line where it starts, that row is dropped, and reading starts again on the next line. A row
    that breaks the rules within itself (``"ab"c``) is read leniently, as before.
    """
    lines = text.split("\n")
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    rows: list[tuple[int, list[str]]] = []
    problems: list[tuple[int, str]] = []
    start = 0
    while start < len(lines):
        feed = _Lines(lines, start)
        reader = csv.reader(feed, delimiter=delimiter, strict=True)
        try:
            for cells in reader:
                if any(c.strip() for c in cells):
                    rows.append((start + 1, cells))
                start = feed.next
            break
        except csv.Error:
            unterminated, at = _scan_record(lines, start, delimiter)
        if unterminated:
            if not rows:
                raise LoadFailure(f'{at + 1}行目(見出し行)の引用符(")が閉じられていません')
            problems.append((at + 1, _unterminated(at + 1)))
            start = at + 1
            continue
        try:
            cells = next(csv.reader(lines[start:at], delimiter=delimiter), [])
        except csv.Error as exc:
            if not rows:
                raise LoadFailure(
                    f"{start + 1}行目(見出し行)のCSVを読めません: {_csv_detail(exc)}"
                ) from None
            problems.append(
                (
                    start + 1,
                    f"{start + 1}行目のCSVを読めません: {_csv_detail(exc)}。この行は読み込みません",
                )
            )
        else:
            if any(c.strip() for c in cells):
                rows.append((start + 1, cells))
        start = at
    return rows, problems


def _auto_id_column(header: list[str]) -> str | None:
    for name in header:
        low = name.lower()
        if low in ("id", "_id") or low.endswith("_id"):
            return name
    return None


def _check_columns(header: list[str], settings: CsvSettings) -> None:
    wanted = [c for _, cols in settings.text_fields for c in cols]
    wanted += [c for _, c in settings.metadata_columns]
    wanted += [c for c in (settings.id_column, settings.title_column) if c]
    missing = [c for c in dict.fromkeys(wanted) if c not in header]
    if missing:
        raise LoadFailure(
            f"設定 [ingest.csv] の列 {missing} がありません(この表の列: {', '.join(header)})"
        )


def _joined(row: dict[str, str], columns: tuple[str, ...], *, labels: bool) -> str:
    """One column → its value; several (or ``labels``) → ``列名: 値`` lines of the non-empty."""
    if len(columns) == 1 and not labels:
        return row.get(columns[0], "").strip()
    return "\n".join(f"{c}: {row[c].strip()}" for c in columns if row.get(c, "").strip())


class _RowBuilder:
    def __init__(
        self,
        source: SourceFile,
        config: CollectionConfig,
        settings: CsvSettings,
        header: list[str],
    ) -> None:
        self.source = source
        self.config = config
        self.settings = settings
        self.header = header
        self.configured_id = settings.id_column
        self.id_column = settings.id_column or _auto_id_column(header)
        self.title_column = settings.title_column or next(
            (
                c
                for names in (TITLE_COLUMNS, QUESTION_COLUMNS)
                for c in header
                if c.lower() in names
            ),
            None,
        )
        self.type = source_type(settings.source_type, config, DEFAULT_SOURCE_TYPE)
        self.seen: dict[str, int] = {}

    def doc_id(self, row: dict[str, str], line: int, errors: list[LoadError]) -> str | None:
        if self.id_column is None:
            return f"{self.source.doc_prefix}#{line}"
        value = row.get(self.id_column, "").strip()
        if not value:
            errors.append(
                line_error(
                    self.source,
                    line,
                    f"{line}行目に ID(列「{self.id_column}」)がありません。この行は読み込みません",
                )
            )
            return None
        if value in self.seen:
            errors.append(
                line_error(
                    self.source,
                    line,
                    f"{line}行目の ID「{value}」は"
                    f"{self.seen[value]}行目と重複しています。この行は読み込みません",
                )
            )
            return None
        self.seen[value] = line
        return value

    def metadata(
        self, row: dict[str, str], doc_id: str, where: str, errors: list[LoadError]
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if self.settings.metadata_columns:
            for key, column in self.settings.metadata_columns:
                set_metadata(meta, key, row.get(column, "").strip(), errors, where)
        elif not self.settings.text_fields:
            for column, cell in row.items():
                value = cell.strip()
                if value and len(value) <= SHORT_VALUE and column:
                    meta[column] = value
                    alias = canonical_key(column)
                    if alias and alias != "title":
                        set_metadata(meta, alias, value, [], where)
        title = row.get(self.title_column, "").strip() if self.title_column else ""
        return base_metadata(self.source, title=title or doc_id, source_type=self.type, extra=meta)

    def records(self, row: dict[str, str], line: int, errors: list[LoadError]) -> list[Record]:
        doc_id = self.doc_id(row, line, errors)
        if doc_id is None:
            return []
        meta = self.metadata(row, doc_id, f"{self.source.path}:{line}", errors)
        out: list[Record] = []
        if self.settings.text_fields:
            for name, columns in self.settings.text_fields:
                out.extend(
                    field_records(
                        doc_id,
                        name,
                        chunked(_joined(row, columns, labels=False), self.config),
                        meta,
                    )
                )
        else:
            body_columns = tuple(c for c in self.header if c and c != self.id_column)
            out.extend(
                field_records(
                    doc_id,
                    BODY_FIELD,
                    chunked(_joined(row, body_columns, labels=True), self.config),
                    meta,
                )
            )
        if not out:
            errors.append(
                line_error(self.source, line, f"{line}行目に検索できるテキストがありません")
            )
        return out


def _line_of(error: LoadError) -> int:
    tail = error.path.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def load_csv(
    source: SourceFile, data: bytes, config: CollectionConfig, settings: IngestSettings
) -> LoadResult:
    cfg = settings.csv
    text = decode(data, cfg.encoding, allow_cp932=True)
    delimiter = cfg.delimiter or ("\t" if source.path.suffix.lower() == ".tsv" else ",")
    rows, problems = _rows(text, delimiter)
    if not rows:
        raise LoadFailure("ファイルが空です")
    header = [h.strip() for h in rows[0][1]]
    if len(header) > settings.limits.max_columns:
        raise LoadFailure(
            f"ファイル「{source.path.name}」の列数({len(header):,})が上限"
            f"({settings.limits.max_columns:,} 列)を超えるため読み込みません"
        )
    if len(rows) == 1:
        raise LoadFailure("見出し行だけでデータ行がありません")
    _check_columns(header, cfg)
    builder = _RowBuilder(source, config, cfg, header)
    records: list[Record] = []
    errors = [line_error(source, line, reason) for line, reason in problems]
    for line, cells in rows[1:]:
        if len(cells) > len(header) and any(c.strip() for c in cells[len(header) :]):
            errors.append(
                line_error(
                    source,
                    line,
                    f"{line}行目の列数({len(cells)})が見出し行({len(header)})より多いです。"
                    "この行は読み込みません",
                )
            )
            continue
        row = dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=False))
        records.extend(builder.records(row, line, errors))
    errors.sort(key=_line_of)
    return LoadResult(tuple(records), tuple(errors))


__all__ = ["load_csv"]
