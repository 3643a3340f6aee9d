"""The upload page's column mapping in a real browser: a Shift_JIS store list is read by the
server (its encoding found, the first rows shown as text — a hostile cell stays inert), its
columns mapped (店舗名 → タイトル, 住所 → 本文, 開店日 → 日付, エリア → メタデータ), mistakes
explained in Japanese beside the form before anything is sent, the upload run as a job, and a
store then found on the search test page with its mapped metadata. A Markdown file beside it
skips the mapping; on a phone the mapping fits the screen."""

from __future__ import annotations

from pathlib import Path

from .support import HOSTILE

STORES = [
    ("店舗コード", "店舗名", "住所", "開店日", "エリア", "備考"),
    ("S001", "新宿三丁目店", "東京都新宿区新宿3-14-1 2階", "2019/04/01", "東京西", "駅直結"),
    ("S002", "横浜西口店", "神奈川県横浜市西区南幸1-5-1", "2020/10/15", "神奈川", HOSTILE),
    ("S003", "梅田茶屋町店", "大阪府大阪市北区茶屋町8-26", "2022/07/20", "関西", "深夜営業あり"),
]


def store_csv(path: Path) -> Path:
    """The store list as Excel in Japan saves it: Shift_JIS (cp932), CRLF."""
    text = "\r\n".join(",".join(row) for row in STORES) + "\r\n"
    path.write_bytes(text.encode("cp932"))
    return path


def role(page, column: str, value: str, name: str | None = None) -> None:
    page.select_option(f"#mapping select[data-column='{column}']", value)
    if name is not None:
        page.locator(f".map-row[data-column='{column}'] .map-name input").fill(name)


def map_stores(page) -> None:
    role(page, "店舗コード", "id")
    role(page, "店舗名", "title")
    role(page, "住所", "text", "body")
    role(page, "開店日", "date")
    role(page, "エリア", "meta", "area")
    role(page, "備考", "skip")


def test_map_a_shift_jis_csv_upload_it_and_find_a_store(live, watched, tmp_path: Path):
    page = watched.page
    csv = store_csv(tmp_path / "店舗一覧.csv")
    note = tmp_path / "店舗運営メモ.md"
    note.write_text("# 店舗運営メモ\n\n閉店後はレジ締めを二人で行います。\n", encoding="utf-8")
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)

    page.goto(live.base_url + "/ingest")
    page.fill("#collection", "stores_map")
    page.set_input_files("#files", [str(csv), str(note)])
    page.wait_for_selector("#mapping .map-row")
    assert page.locator("#mapping .map-row").count() == 6
    described = page.locator("#mapping-note").inner_text()
    assert "店舗一覧.csv" in described and "CSV" in described
    assert "文字コード" in described and "カンマ" in described
    table = page.locator("#mapping table.preview-rows")
    assert table.locator("tbody tr").count() == 3
    assert "新宿三丁目店" in table.inner_text()  # decoded from Shift_JIS
    hostile = table.locator("td", has_text="<img")
    assert hostile.inner_text() == HOSTILE  # the cell is text, not an element
    assert page.locator("#preview img").count() == 0
    assert "店舗運営メモ" in page.locator("#file-previews").inner_text()  # no mapping for it

    # mistakes are explained beside the form and nothing is uploaded
    map_stores(page)
    role(page, "住所", "title")
    role(page, "エリア", "meta", "")
    page.click("#start")
    errors = page.locator("#form-errors [role=alert]")
    errors.wait_for()
    text = errors.inner_text()
    assert "タイトルにできる列は1つだけです" in text
    assert "本文にする列を1つ以上選んでください" in text
    assert "列「エリア」のメタデータのキーを入力してください" in text
    assert not any(u.endswith("/api/ingest") for u in posted)

    map_stores(page)  # fixed: the errors go as the mapping changes
    page.wait_for_selector("#form-errors [role=alert]", state="detached")
    tags = page.locator("#mapping thead .role").all_inner_texts()
    assert tags[:5] == ["ID", tags[1], "本文: body", "日付", "メタデータ: area"]
    assert tags[1].startswith("タイトル") and tags[5] == "使わない"
    page.click("#start")
    page.wait_for_function(
        "() => /完了|失敗/.test(document.getElementById('job-status').textContent)"
    )
    status = page.locator("#job-status").inner_text()
    assert status.startswith("完了"), (status, page.locator("#job-result").inner_text())
    assert page.locator("ul.failures li").count() == 0
    assert page.locator("#cancel").is_hidden()  # offered only while the job runs

    page.goto(live.base_url + "/search?collection=stores_map&q=新宿区の店舗")
    page.wait_for_selector("#weights .card")
    page.click("#run")
    page.wait_for_selector(".hit")
    hit = page.locator(".hit", has_text="新宿三丁目店").first
    head = hit.locator(".head").inner_text()
    assert "新宿三丁目店" in head and "2019-04-01" in head  # title and the normalised date
    hit.locator(".meta details summary").click()  # a key named in English is behind 詳細
    assert hit.locator(".meta .kv[data-key=area]").inner_text() == "area: 東京西"
    assert "東京都新宿区" in hit.locator(".text").inner_text()
    assert "駅直結" not in hit.inner_text()  # 備考 was not used
    watched.assert_clean(live.base_url)


def test_the_collections_saved_mapping_is_the_starting_point(live, watched, tmp_path: Path):
    """After an upload with a mapping, the same collection starts from that mapping."""
    page = watched.page
    csv = store_csv(tmp_path / "店舗一覧2.csv")
    page.goto(live.base_url + "/ingest")
    page.fill("#collection", "stores_saved")
    page.set_input_files("#files", [str(csv)])
    page.wait_for_selector("#mapping .map-row")
    map_stores(page)
    page.click("#start")
    page.wait_for_function(
        "() => /完了|失敗/.test(document.getElementById('job-status').textContent)"
    )
    assert page.locator("#job-status").inner_text().startswith("完了")

    page.goto(live.base_url + "/ingest?collection=stores_saved")
    page.wait_for_selector("#collection-list option[value=stores_saved]", state="attached")
    page.set_input_files("#files", [str(csv)])
    page.wait_for_selector("#mapping .map-row")
    assert "このコレクションに保存された割り当て" in page.locator("#mapping").inner_text()
    chosen = {
        col: page.locator(f"#mapping select[data-column='{col}']").input_value()
        for col in STORES[0]
    }
    assert chosen == {
        "店舗コード": "id",
        "店舗名": "title",
        "住所": "text",
        "開店日": "date",
        "エリア": "meta",
        "備考": "skip",
    }
    key = page.locator(".map-row[data-column='エリア'] .map-name input")
    assert key.input_value() == "area"
    watched.assert_clean(live.base_url)


def test_the_mapping_is_usable_from_the_keyboard_and_on_a_phone(live, watched, tmp_path: Path):
    page = watched.page
    page.set_viewport_size({"width": 390, "height": 844})
    csv = store_csv(tmp_path / "店舗一覧3.csv")
    page.goto(live.base_url + "/ingest")
    page.set_input_files("#files", [str(csv)])
    page.wait_for_selector("#mapping .map-row")
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 391, f"the mapping scrolls sideways on a phone ({wide}px)"
    select = page.locator("#mapping select[data-column='エリア']")
    select.focus()
    assert select.get_attribute("aria-label") == "列「エリア」の使い方"
    select.select_option("meta")
    key = page.locator(".map-row[data-column='エリア'] .map-name input")
    key.focus()
    assert key.get_attribute("aria-label") == "列「エリア」のメタデータのキー"
    key.fill("title")  # reserved: the loader sets it
    page.locator("#collection").focus()
    page.keyboard.type("stores_phone")
    page.keyboard.press("Enter")  # submits the form from the keyboard
    errors = page.locator("#form-errors [role=alert]")
    errors.wait_for()
    assert "キー「title」は使えません" in errors.inner_text()
    watched.assert_clean(live.base_url)


def test_a_jsonl_upload_works_with_the_mapping_as_offered(live, watched, tmp_path: Path):
    """A JSON field takes one key: the page turns the suggestion (title and body in one
    field) into one it can send, and the upload goes through untouched."""
    import json

    faq = [
        {
            "id": f"faq{i}",
            "title": title,
            "body": body * 3,
            "category": "レジ",
        }
        for i, (title, body) in enumerate(
            [
                ("釣り銭の準備", "開店の30分前に、レジの釣り銭を二人で数えて記録します。"),
                ("レジ締め", "閉店後に売上と現金を照合し、差額があれば店長に報告します。"),
                ("両替", "両替は銀行の窓口で行い、受け取った金額をその場で確認します。"),
            ]
        )
    ]
    path = tmp_path / "レジFAQ.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in faq), encoding="utf-8")
    page = watched.page
    page.goto(live.base_url + "/ingest")
    page.fill("#collection", "faq_jsonl")
    page.set_input_files("#files", [str(path)])
    page.wait_for_selector("#mapping .map-row")
    assert "JSONL" in page.locator("#mapping-note").inner_text()
    assert page.locator("#mapping select[data-column='title']").input_value() == "title"
    assert not page.locator(".map-row[data-column='title'] .map-also input").is_checked()
    page.click("#start")
    page.wait_for_function(
        "() => /完了|失敗/.test(document.getElementById('job-status').textContent)"
    )
    assert page.locator("#job-status").inner_text().startswith("完了")
    assert page.locator("#form-errors [role=alert]").count() == 0
    page.goto(live.base_url + "/search?collection=faq_jsonl&q=釣り銭を数える")
    page.wait_for_selector("#weights .card")
    page.click("#run")
    page.wait_for_selector(".hit")
    assert "釣り銭の準備" in page.locator(".hit").first.locator(".head").inner_text()
    watched.assert_clean(live.base_url)


def test_the_servers_refusal_is_shown_beside_the_form(live, watched, tmp_path: Path):
    """Two table files share the first one's mapping; when the second lacks a mapped column the
    server refuses the upload (422) and its Japanese message is shown next to the form."""
    page = watched.page
    csv = store_csv(tmp_path / "店舗一覧4.csv")
    other = tmp_path / "閉店店舗.csv"
    other.write_text("店舗コード,店舗名,閉店日\nS900,旧池袋店,2024/03/31\n", encoding="utf-8")
    page.goto(live.base_url + "/ingest")
    page.fill("#collection", "stores_refused")
    page.set_input_files("#files", [str(csv), str(other)])
    page.wait_for_selector("#mapping .map-row")
    assert "表のファイル 2 個すべてに使います" in page.locator("#mapping-note").inner_text()
    map_stores(page)
    page.click("#start")
    errors = page.locator("#form-errors [role=alert]")
    errors.wait_for()
    text = errors.inner_text()
    assert "閉店店舗.csv" in text and "列「住所」がありません" in text, text
    assert page.locator("#job").is_hidden()  # no job was started
    assert not live.state.client.has_collection("stores_refused")
    watched.console.clear()  # the browser logs the refused request's 422
    watched.assert_clean(live.base_url)
