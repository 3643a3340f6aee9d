"""The upload field mapping over real HTTP: ``POST /api/ingest/preview`` reads Shift_JIS and
UTF-8 tables with Japanese headers (and JSON Lines) and suggests a mapping; a broken file is a
422 naming the problem; ``POST /api/ingest`` with ``mapping`` builds the records from it (fields,
metadata a search can filter on), saves it in the collection's config for later uploads and
the library's ingest, and refuses an unknown column or bad JSON with a 422 before any job."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tables"

# The demo's event list under Japanese headers, as a Japanese office exports it.
EVENT_HEADERS = {
    "event_id": "番号",
    "event_name": "イベント名",
    "description": "説明",
    "category": "カテゴリ",
    "start_date": "開始日",
    "end_date": "終了日",
    "venue": "会場",
    "price": "料金",
}
STORE_HEADERS = {
    "store_id": "店舗コード",
    "store_name": "店舗名",
    "description": "紹介文",
    "category": "業態",
    "phone": "電話番号",
    "address": "住所",
}


def japanese_table(source: str, headers: dict[str, str], *, delimiter: str = ",") -> str:
    with (EXAMPLES / source).open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(headers.values())
    for row in rows:
        writer.writerow([row[k] for k in headers])
    return out.getvalue()


def events_sjis() -> bytes:
    return japanese_table("events.csv", EVENT_HEADERS).encode("cp932")


def preview(http: httpx.Client, name: str, data: bytes, **form: str) -> httpx.Response:
    return http.post("/api/ingest/preview", data=form, files={"file": (name, data, "text/csv")})


def upload(
    http: httpx.Client, collection: str, files: list[tuple[str, bytes]], mapping: Any = None
) -> httpx.Response:
    data = {"collection": collection}
    if mapping is not None:
        data["mapping"] = mapping if isinstance(mapping, str) else json.dumps(mapping)
    parts = [("files", (name, body, "application/octet-stream")) for name, body in files]
    return http.post("/api/ingest", data=data, files=parts)


def finished(http: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        job = http.get(f"/api/jobs/{job_id}").json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_preview_of_a_shift_jis_event_list(live):
    with live.client(KEY_ALPHA) as http:
        r = preview(http, "イベント一覧.csv", events_sjis(), collection="manuals")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["format"] == "csv" and body["encoding"] == "cp932" and body["delimiter"] == ","
    assert body["columns"] == list(EVENT_HEADERS.values())
    assert len(body["rows"]) == 5 and body["rows"][0][:2] == ["EVT-001", "芝浦運河オータムフェス"]
    assert body["suggested"] == {
        "id_column": "番号",
        "title_column": "イベント名",
        "text_fields": {"body": ["イベント名", "説明"]},
        "metadata_columns": {
            "category": "カテゴリ",
            "date": "開始日",
            "終了日": "終了日",
            "会場": "会場",
            "料金": "料金",
        },
        "source_type": "",
    }
    assert body["current"] is None  # manuals maps no table


def test_preview_of_utf8_tables_and_json_lines(live):
    stores = japanese_table("stores.csv", STORE_HEADERS)
    long_cell = "長い説明。" * 100
    with live.client(KEY_ALPHA) as http:
        r = preview(http, "店舗.csv", ("\ufeff" + stores).encode("utf-8"))
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["encoding"] == "utf-8-sig" and body["columns"][0] == "店舗コード"
        s = body["suggested"]
        assert (s["id_column"], s["title_column"]) == ("店舗コード", "店舗名")
        assert s["text_fields"] == {"body": ["店舗名", "紹介文"]}
        assert s["metadata_columns"]["業態"] == "業態"
        assert s["metadata_columns"]["電話番号"] == "電話番号"
        tsv = japanese_table("stores.csv", STORE_HEADERS, delimiter="\t").replace(
            "芝浦運河沿いの", long_cell, 1
        )
        r = preview(http, "店舗.tsv", tsv.encode("utf-8"))
        assert r.status_code == 200 and r.json()["delimiter"] == "\t"
        assert max(len(c) for row in r.json()["rows"] for c in row) == 200  # cells cut
        cards = [
            {
                "id": f"C-{i}",
                "name": f"炎の剣士{i}",
                "effect": "相手の場札を1枚選んで破壊する。",
                "cost": i,
            }
            for i in range(1, 8)
        ]
        lines = "\n".join(json.dumps(c, ensure_ascii=False) for c in cards).encode()
        r = preview(http, "カード.jsonl", lines)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["format"] == "jsonl" and body["delimiter"] is None
        assert body["columns"] == ["id", "name", "effect", "cost"]
        assert body["rows"][0] == ["C-1", "炎の剣士1", "相手の場札を1枚選んで破壊する。", "1"]
        assert body["suggested"]["id_column"] == "id"
        assert body["suggested"]["title_column"] == "name"
        # JSON: a field reads one key, and the title stays the record's title
        assert body["suggested"]["text_fields"] == {"body": ["effect"]}
        assert body["suggested"]["metadata_columns"] == {"cost": "cost"}
        # the suggestion as offered is a mapping the upload accepts
        r = upload(http, "cards_suggested", [("カード.jsonl", lines)], body["suggested"])
        assert r.status_code == 202, r.text
        assert finished(http, r.json()["id"])["status"] == "done"


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("壊れた.csv", "番号,名前\n1,".encode() + b"\x85\x40\x85\x40\n", "文字コード"),
        ("日報.jsonl", '{"本文": "売上は好調"}'.encode("cp932"), "UTF-8"),
        ("数字だけ.csv", b"1,2025-10-01,300\n2,2025-10-02,400\n", "見出し"),
        ("空.csv", b"", "空"),
        ("見出しだけ.csv", "番号,名前\n".encode(), "データ行"),
        ("重複.csv", "名前,名前\n山田,田中\n".encode(), "重複"),
        ("カード.jsonl", b'{"id": 1}\n{"id": 2}\n{"id": 3,\n', "3行目のJSONが不正"),
        ("カード.json", b'[{"id": 1},\n {"id": 2]', "2行目"),
        ("手順.md", "# 手順\n本文".encode(), ".csv, .tsv, .jsonl, .json"),
    ],
)
def test_a_broken_file_is_a_422_naming_the_problem(live, name, data, says):
    with live.client(KEY_ALPHA) as http:
        r = preview(http, name, data)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_file" and name in error["message"], error
    assert says in error["message"], error


EVENT_MAPPING = {
    "id_column": "番号",
    "title_column": "イベント名",
    "text_fields": {"本文": ["イベント名", "説明"]},
    "metadata_columns": {"date": "開始日", "category": "カテゴリ", "venue": "会場"},
    "source_type": "event",
}


def test_an_upload_mapping_builds_the_records_and_is_saved(fresh):
    home = Path(fresh.state.client.workspace.home)
    with fresh.client(KEY_ALPHA) as http:
        r = upload(http, "events", [("イベント一覧.csv", events_sjis())], EVENT_MAPPING)
        assert r.status_code == 202, r.text
        assert r.json()["params"]["mapping"]["id_column"] == "番号"
        job = finished(http, r.json()["id"])
        assert job["status"] == "done" and job["failures"] == [], job
        assert job["result"]["inserted"] == 21
        page = http.get("/api/collections/events/records", params={"limit": 200}).json()
        first = next(r for r in page["records"] if r["doc_id"] == "EVT-001")
        assert first["field"] == "本文"
        assert first["text"].startswith("イベント名: 芝浦運河オータムフェス\n説明: 運河沿いに")
        meta = first["metadata"]
        assert meta["title"] == "芝浦運河オータムフェス" and meta["date"] == "2025-10-04"
        assert meta["category"] == "festival" and meta["venue"] == "芝浦運河沿い遊歩道"
        assert meta["source_type"] == "event" and "料金" not in meta
        hits = http.post(
            "/api/search",
            json={"query": "マーケット", "collection": "events", "where": ["category=market"]},
        ).json()["hits"]
        assert hits and all(h["metadata"]["category"] == "market" for h in hits)
        config = http.get("/api/collections/events/config").json()["config"]
        assert config["ingest"]["csv"] == {
            "id_column": "番号",
            "title_column": "イベント名",
            "text_fields": {"本文": ["イベント名", "説明"]},
            "metadata_columns": {"date": "開始日", "category": "カテゴリ", "venue": "会場"},
            "source_type": "event",
        }
        shown = preview(http, "追加.csv", events_sjis(), collection="events").json()
        assert shown["current"] == EVENT_MAPPING
        assert (
            preview(http, "追加.csv", events_sjis(), collection="secret").json()["current"] is None
        )
        # a later upload without a mapping reads its tables the same way
        more = "番号,イベント名,説明,カテゴリ,開始日,終了日,会場,料金\r\n"
        more += "EVT-900,冬の餅つき大会,つきたてのお餅を無料でふるまいます。,festival,"
        more += "2025-12-28,2025-12-28,芝浦公園,無料\r\n"
        r = upload(http, "events", [("追加.csv", more.encode("cp932"))])
        assert finished(http, r.json()["id"])["status"] == "done"
        hits = http.post(
            "/api/search", json={"query": "餅つき", "collection": "events", "top_k": 1}
        ).json()["hits"]
        assert hits[0]["doc_id"] == "EVT-900" and hits[0]["metadata"]["date"] == "2025-12-28"
    with fresh.client(KEY_BETA) as beta:  # another team: neither the collection nor its mapping
        shown = preview(beta, "追加.csv", events_sjis(), collection="events").json()
        assert shown["current"] is None
    # the library's ingest (what `tansaku ingest` runs) reads the saved mapping too
    src = home.parent / "src"
    src.mkdir()
    (src / "再取り込み.csv").write_bytes(more.encode("cp932"))
    report = fresh.state.client.ingest([src], collection="events", team="alpha")
    assert report.failed == () or not report.failed
    with fresh.state.client.reading("events") as col:
        record = col.store.get("alpha", ["EVT-900:本文"])[0]
    assert record.metadata["category"] == "festival"


def test_a_json_lines_mapping_goes_into_ingest_json(fresh):
    cards = [
        {
            "カード番号": f"C-{i}",
            "カード名": f"炎の剣士{i}",
            "効果": "相手の場札を1枚破壊する。",
            "コスト": i,
        }
        for i in range(1, 6)
    ]
    data = "\n".join(json.dumps(c, ensure_ascii=False) for c in cards).encode()
    mapping = {
        "id_column": "カード番号",
        "title_column": "カード名",
        "text_fields": {"effect": ["効果"]},
        "metadata_columns": {"cost": "コスト"},
    }
    with fresh.client(KEY_ALPHA) as http:
        r = upload(
            http,
            "cards",
            [("カード.jsonl", data), ("メモ.md", "# メモ\n大会は12月。".encode())],
            mapping,
        )
        assert r.status_code == 202, r.text
        job = finished(http, r.json()["id"])
        assert job["status"] == "done", job
        config = http.get("/api/collections/cards/config").json()["config"]["ingest"]
        assert config["json"] == {
            "id_key": "カード番号",
            "title_key": "カード名",
            "fields": {"effect": "効果"},
            "metadata_keys": {"cost": "コスト"},
        }
        assert "csv" not in config
        hits = http.post(
            "/api/search",
            json={"query": "破壊", "collection": "cards", "where": ["cost<=2"], "top_k": 10},
        ).json()["hits"]
        assert {h["doc_id"] for h in hits} == {"C-1", "C-2"}
        assert hits[0]["field"] == "effect"


@pytest.mark.parametrize(
    ("mapping", "says"),
    [
        (
            {**EVENT_MAPPING, "id_column": "イベントID"},
            "ファイル「イベント一覧.csv」に列「イベントID」がありません",
        ),
        ({**EVENT_MAPPING, "metadata_columns": {"store": "店舗"}}, "列「店舗」"),
        ('{"id_column": "番号",', "mapping の JSON が不正です"),
        ("[1, 2]", "JSON オブジェクト"),
        ({**EVENT_MAPPING, "team": "beta"}, "不明なキー"),
        ({**EVENT_MAPPING, "metadata_columns": {"title": "説明"}}, "キー「title」"),
        ({**EVENT_MAPPING, "text_fields": {"本文": []}}, "列名のリスト"),
    ],
)
def test_a_bad_mapping_is_a_422_before_any_job(fresh, mapping, says):
    with fresh.client(KEY_ALPHA) as http:
        r = upload(http, "events", [("イベント一覧.csv", events_sjis())], mapping)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "invalid_mapping"
        assert says in r.json()["error"]["message"], r.json()
        assert all(
            c["name"] != "events" for c in http.get("/api/collections").json()["collections"]
        )
    uploads = Path(fresh.state.client.workspace.home) / "server" / "uploads"
    assert not uploads.exists() or not list(uploads.iterdir())


def test_mapping_limits_and_files_it_cannot_apply_to(live):
    with live.client(KEY_ALPHA) as http:
        r = upload(http, "x_docs", [("手順.md", "# 手順\n本文".encode())], EVENT_MAPPING)
        assert r.status_code == 422 and "CSV" in r.json()["error"]["message"]
        cards = json.dumps(
            {"番号": "C-1", "イベント名": "大会", "説明": "説明文です。"}, ensure_ascii=False
        )
        r = upload(http, "x_docs", [("カード.jsonl", cards.encode())], EVENT_MAPPING)
        assert r.status_code == 422 and "列「開始日」" in r.json()["error"]["message"]
        two = {**EVENT_MAPPING, "metadata_columns": {}, "source_type": ""}
        r = upload(http, "x_docs", [("カード.jsonl", cards.encode())], two)
        assert r.status_code == 422 and "1つのキーだけ" in r.json()["error"]["message"]
        big = json.dumps({**EVENT_MAPPING, "source_type": "x" * 9000})
        r = upload(http, "x_docs", [("イベント一覧.csv", events_sjis())], big)
        assert r.status_code == 422


def test_suggestions_for_the_demo_tables_as_shipped():
    """The library function on the demo's own files (English headers, Japanese values)."""
    from tansaku.ingest.preview import read_table, suggest_mapping

    stores = suggest_mapping(read_table("stores.csv", (EXAMPLES / "stores.csv").read_bytes()))
    assert (stores["id_column"], stores["title_column"]) == ("store_id", "store_name")
    assert {"description", "menu", "accessibility"} <= set(stores["text_fields"]["body"])
    meta = stores["metadata_columns"]
    assert meta["category"] == "category" and meta["phone"] == "phone"
    assert meta["opening_hours"] == "opening_hours"  # JSON is kept as metadata, not searched
    assert "email" in meta and "address" in meta
    events = suggest_mapping(read_table("events.csv", (EXAMPLES / "events.csv").read_bytes()))
    assert events["text_fields"] == {"body": ["event_name", "description"]}
    assert events["metadata_columns"]["date"] == "start_date"
    assert events["metadata_columns"]["url"] == "url"
    corpus = Path("/work/shared/data/jsquad-ir/corpus.jsonl")
    if corpus.is_file():  # the JSQuAD passages: Wikipedia titles and paragraphs
        head = b"".join(corpus.open("rb").readlines()[:200])
        suggested = suggest_mapping(read_table("corpus.jsonl", head))
        assert suggested["id_column"] == "_id" and suggested["title_column"] == "title"
        assert suggested["text_fields"] == {"body": ["text"]}


def test_the_suggestion_for_a_qa_sheet_titles_it_with_the_question() -> None:
    from tansaku.ingest.preview import read_table, suggest_mapping

    sheet = (
        "No,質問,回答\n"
        "1,住民票の写しはどこで取れますか。,市役所の市民課か、マイナンバーカードでコンビニでも取れます。\n"
        "2,犬の登録はどうすればよいですか。,生後91日以上の犬は保健所か動物病院で登録してください。\n"
    ).encode()
    suggested = suggest_mapping(read_table("faq.csv", sheet))
    assert suggested["id_column"] == "No"
    assert suggested["title_column"] == "質問"
    assert suggested["text_fields"] == {"body": ["質問", "回答"]}


def test_a_short_qa_sheet_searches_question_and_answer() -> None:
    from tansaku.ingest.preview import read_table, suggest_mapping

    sheet = "question,answer\n釣り銭は何時に数える?,開店の30分前\n".encode()
    suggested = suggest_mapping(read_table("faq.csv", sheet))
    assert suggested["title_column"] == "question"
    assert suggested["text_fields"] == {"body": ["question", "answer"]}
