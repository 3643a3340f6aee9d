"""Every page in a real browser, on a laptop and on a phone: it renders its Japanese heading,
logs no console error and no CSP violation, and fetches nothing from outside 127.0.0.1.

With ``TANSAKU_UI_SCREENSHOTS=<dir>`` the last test saves a screenshot of every page (with
some data on it) there — the pictures of ``docs/ui.md``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .support import MANUAL_QUESTION

PAGES = [
    ("/", "説明"),
    ("/chat", "エージェント対話"),
    ("/unanswered", "未回答ログ"),
    ("/ingest", "データ取り込み"),
    ("/qa", "Q/A生成"),
    ("/collections", "コレクション管理"),
    ("/search", "検索テスト"),
    ("/dashboard", "ダッシュボード"),
    ("/sql", "SQL・表"),
]


@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["laptop", "phone"])
def test_every_page_renders_cleanly(live, watched, viewport):
    page = watched.page
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    for path, heading in PAGES:
        page.goto(live.base_url + path)
        page.wait_for_load_state("networkidle")
        assert page.locator("main h1").inner_text() == heading
        assert page.locator(f"nav.side a[aria-current=page][href='{path}']").count() == 1
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= viewport[0] + 1, f"{path} scrolls sideways on {viewport}"
    watched.assert_clean(live.base_url)


def test_overview_lists_collections_tables_and_models(live, watched):
    page = watched.page
    page.goto(live.base_url + "/")
    main = page.locator("main").inner_text()
    for name in ("reports", "manuals", "stores", "events", "daily_reports"):
        assert name in main
    assert "店舗の日報" in main
    assert "未設定" in main  # no chat model configured: the offline router answers
    watched.assert_clean(live.base_url)


def test_sql_page_runs_a_select_and_refuses_a_drop(live, watched):
    page = watched.page
    page.goto(live.base_url + "/sql")
    page.wait_for_selector("#tables .card")
    page.fill("#sql", "SELECT store_name, category FROM stores ORDER BY store_id LIMIT 3")
    page.click("#run")
    page.wait_for_selector("#result table")
    assert page.locator("#result tbody tr").count() == 3
    page.fill("#sql", "DROP TABLE stores")
    page.click("#run")
    page.wait_for_selector("#result .error")
    watched.console.clear()  # the refused statement's 400 is logged by the browser
    assert page.locator("#result .error").inner_text()


def test_qa_page_offers_the_cli_command(live, watched):
    page = watched.page
    page.goto(live.base_url + "/qa")
    page.wait_for_function("() => document.getElementById('target').value !== ''")
    assert page.locator("#target").input_value() == page.locator("#source").input_value() + "_qa"
    page.fill("#target", "manuals_qa")
    page.fill("#limit", "5")
    page.click("#cli-mode summary")
    command = page.locator("#command").inner_text()
    assert command.startswith("tansaku qa generate --from ")
    assert command.endswith("--into manuals_qa --limit 5")
    watched.assert_clean(live.base_url)


def shoot_qa_job(page, base_url: str, monkeypatch) -> None:
    """The Q/A page after a finished job (the fake OpenAI server writes one pair a chunk)."""
    import json

    from tansaku.testing import FakeOpenAIServer, Reply

    def one_pair(turn):
        text = turn.last.content.split("# テキスト\n", 1)[1].split("\n\n# 出力", 1)[0]
        first = text.strip().splitlines()[-1][:60]
        pair = {"question": f"{first[:20]}について教えてください", "answer": first}
        return Reply.say(json.dumps({"qa_pairs": [pair]}, ensure_ascii=False))

    with FakeOpenAIServer(handler=one_pair, model="gpt-4o-mini") as srv:
        monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "openai")
        monkeypatch.setenv("TANSAKU_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
        page.goto(base_url + "/qa")
        page.wait_for_selector("#source option[value=manuals]", state="attached")
        page.select_option("#source", "manuals")
        page.fill("#target", "manuals_qa")
        page.fill("#limit", "8")
        page.click("#start")
        page.wait_for_selector("#try-search")


@pytest.mark.skipif(
    not os.environ.get("TANSAKU_UI_SCREENSHOTS"), reason="set TANSAKU_UI_SCREENSHOTS=<dir>"
)
def test_screenshots(live, watched, monkeypatch, tmp_path: Path):
    from .test_ingest_mapping_ui import store_csv

    out = Path(os.environ["TANSAKU_UI_SCREENSHOTS"])
    out.mkdir(parents=True, exist_ok=True)
    page = watched.page
    page.set_viewport_size({"width": 1200, "height": 800})

    def shot(name: str, full: bool = False) -> None:
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out / f"ui-{name}.png"), full_page=full)

    page.goto(live.base_url + "/chat")
    page.wait_for_selector("#collections input")
    page.fill("#question", MANUAL_QUESTION)
    page.click("#send")
    page.wait_for_selector(".msg-bot .rate")
    page.locator(".msg-bot .trace").last.evaluate("d => d.open = true")
    shot("chat")
    page.locator(".msg-bot .rate input").fill("身だしなみの章(1.3)が引用されていない")
    page.click(".msg-bot button[aria-label=悪い]")
    page.wait_for_selector(".msg-bot .rate .ok")
    page.fill("#question", "宇宙船の燃料補給の手順を教えて")
    page.click("#send")
    page.wait_for_selector(".msg-bot:nth-of-type(2) .rate, .msg-bot .warn")
    page.goto(live.base_url + "/")
    shot("overview")
    page.goto(live.base_url + "/search?collection=reports&q=冷蔵庫が壊れた")
    page.wait_for_selector("#weights .card")
    page.click("#run")
    page.wait_for_selector(".hit")
    shot("search")
    page.evaluate("document.getElementById('result').scrollIntoView()")
    shot("search-hits")
    page.goto(live.base_url + "/unanswered")
    page.wait_for_selector("#summary:not(:empty)")
    shot("unanswered")
    page.goto(live.base_url + "/ingest")
    page.fill("#collection", "stores")
    page.set_input_files("#files", [str(store_csv(tmp_path / "店舗一覧.csv"))])
    page.wait_for_selector("#mapping .map-row")
    shot("ingest", full=True)
    shoot_qa_job(page, live.base_url, monkeypatch)
    shot("qa")
    page.goto(live.base_url + "/collections?name=manuals")
    page.wait_for_selector("#records .hit")
    page.evaluate("window.scrollTo(0, 0)")
    shot("collections")
    page.goto(live.base_url + "/dashboard")
    page.wait_for_selector("#cards .card")
    shot("dashboard", full=True)
    page.goto(live.base_url + "/sql")
    page.wait_for_selector("#tables .card")
    page.fill("#sql", "SELECT store_name, category, opening_hours FROM stores LIMIT 5")
    page.click("#run")
    page.wait_for_selector("#result table")
    shot("sql")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live.base_url + "/chat")
    page.wait_for_selector("#collections input")
    shot("phone")
