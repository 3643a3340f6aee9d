"""What an office worker sees, in a real browser: no internal word on the chat, search,
dashboard and unanswered pages (the engine's names live inside collapsed 「詳細」), no sideways
scrolling on a 375 px phone on any page with data on it, the search page's weights panel
whole at 1280 px, 「AIで回答」 on the search page, the skip link, and the Q/A page's refusal
without an empty progress bar."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tansaku.agent.result_text import TOOL_LABELS

from .support import MANUAL_QUESTION

UNANSWERABLE = "宇宙船の燃料補給の手順を教えて"

# Words a Japanese user must never have to decode on these pages. ASCII words match as whole
# words (``manual`` is not found in the collection name ``manuals``), the rest as substrings.
INTERNAL_WORDS = (
    # query types of the classifier and the dashboard
    "clear", "vague", "manual", "statistics", "greeting", "ask",
    # search internals: modes, fusion, parameters, ids, the plan
    "bm25", "dense", "bigram", "top_k", "min_score", "rrf", "linear", "minmax", "max",
    "normalization", "query_id", "doc_id", "JSON", "rrf の k", "プランの JSON",
    # the test workspace's axis names, and one of the cards example
    "keyword", "semantic", "sentence", "effect_keyword",
    # metadata keys and values, record fields, timing stages
    "class:", "type:", "source_type", "daily_report", "author", "claim", "chunk_index",
    "true", "false", "body", "analyze", "embed", "retrieve", "fuse", "total",
    # Sudachi lemmas of light verbs
    "為る", "居る", "有る",
    # what leaks from code
    "null", "undefined", "NaN", "[object Object]", "Traceback", '{"', "Error",
    # the agent's tool names
    *TOOL_LABELS,
)  # fmt: skip


def _pattern(word: str) -> re.Pattern[str]:
    """An ASCII word with no letter, digit or underscore glued to its ends."""
    left = r"(?<![A-Za-z0-9_])" if re.match(r"\w", word, re.ASCII) else ""
    right = r"(?![A-Za-z0-9_])" if re.search(r"\w$", word, re.ASCII) and word.isascii() else ""
    return re.compile(left + re.escape(word) + right)


PATTERNS = {w: _pattern(w) for w in INTERNAL_WORDS}


def internal_words(text: str) -> list[str]:
    return [w for w, p in PATTERNS.items() if p.search(text)]


def visible_text(page) -> str:
    """What is on screen: the body's innerText (Chromium leaves out what a closed
    <details> holds, keeps its summary; display:none is out too)."""
    return page.locator("body").inner_text()


def assert_plain(page, where: str) -> str:
    text = visible_text(page)
    found = internal_words(text)
    assert found == [], f"{where} shows {found}:\n{text}"
    return text


def open_details(page, selector: str) -> None:
    page.locator(selector).evaluate_all("ds => ds.forEach((d) => { d.open = true; })")


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#send")
    page.wait_for_selector(".msg-bot:last-child .rate, .msg-bot:last-child .error")


def search(page, base_url: str, collection: str, query: str) -> None:
    page.goto(f"{base_url}/search?collection={collection}&q={query}")
    page.wait_for_selector("#weights .card")
    page.click("#run")
    page.wait_for_selector(".hit")


def test_the_scan_finds_what_it_should():
    assert internal_words("質問の種類: clear(確信度 0.6)") == ["clear"]
    assert internal_words("manuals — 衛生管理のマニュアル") == []
    assert internal_words("🔧 get_claim_breakdown") == ["get_claim_breakdown"]
    assert internal_words("source_type: daily_report") == ["source_type", "daily_report"]
    assert internal_words("👎 のクエリに多い語 為る 3") == ["為る"]


def test_chat_search_dashboard_and_unanswered_show_no_internal_words(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.wait_for_selector("#collections input[value=manuals]")
    ask(page, MANUAL_QUESTION)
    bot = page.locator(".msg-bot").last
    bot.locator(".rate input").fill("爪の長さが分からない")
    bot.locator("button[aria-label=悪い]").click()  # its terms reach the dashboard
    page.wait_for_selector(".msg-bot:last-child .rate .ok")
    ask(page, "先月のクレーム件数は?")  # the statistics tool
    ask(page, UNANSWERABLE)  # the unanswered log
    text = assert_plain(page, "chat")
    assert "爪は短く切り" in text and "衛生管理マニュアル v2.0" in text
    assert re.search(r"会話中\(\d+ 往復\)", text)
    # the thoughts and tool calls are for people too: opened, only 詳細 keeps the names
    open_details(page, ".trace")
    text = assert_plain(page, "chat with its thoughts open")
    assert "コレクションを検索" in text
    hidden = page.locator("main").text_content() or ""
    assert "search_collections" in hidden or "get_claim" in hidden  # behind 詳細, still there

    search(page, live.base_url, "reports", "冷蔵庫が壊れた")
    text = assert_plain(page, "search")
    for label in ("キーワード一致", "意味の近さ", "文字の並び", "件数", "合計"):
        assert label in text
    hidden = page.locator("main").text_content() or ""
    assert "rrf の k" in hidden and "bm25" in hidden and "query_id" in hidden  # behind 詳細
    assert page.locator("#advanced").get_attribute("open") is None

    page.goto(live.base_url + "/dashboard")
    page.wait_for_selector("#terms table")
    text = assert_plain(page, "dashboard")
    terms = page.locator("#terms").inner_text()
    assert "身だしなみ" in terms and "爪" in terms
    assert "する" not in terms.split()  # the light verb is no term
    assert "具体的な質問" in page.locator("#types").inner_text()

    page.goto(live.base_url + "/unanswered")
    row = page.locator("#list tr", has_text=UNANSWERABLE)
    row.wait_for()
    assert_plain(page, "unanswered")
    assert "コレクションを検索" in row.inner_text()
    watched.assert_clean(live.base_url)


def _no_sideways(page, where: str) -> None:
    page.wait_for_load_state("networkidle")
    wide, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert wide <= inner, f"{where} scrolls sideways at {inner} px ({wide} px wide)"


def test_no_page_scrolls_sideways_at_375_px(live, watched, tmp_path: Path):
    from .test_ingest_mapping_ui import store_csv

    page = watched.page
    page.set_viewport_size({"width": 375, "height": 812})
    base = live.base_url

    page.goto(base + "/chat")
    page.wait_for_selector("#collections input[value=manuals]")
    ask(page, MANUAL_QUESTION)
    _no_sideways(page, "chat after an answer")
    open_details(page, ".msg-bot details")
    _no_sideways(page, "chat with every detail open")

    search(page, base, "reports", "冷蔵庫が壊れた")
    _no_sideways(page, "search after a search")
    page.click("#ai-answer")
    page.wait_for_selector("#ai-result .answer")
    open_details(page, "details")
    _no_sideways(page, "search with its answer and every detail open")

    page.goto(base + "/collections?name=manuals")
    page.wait_for_selector("#records .hit")
    _no_sideways(page, "collections with records")

    page.goto(base + "/ingest")
    page.fill("#collection", "stores")
    page.set_input_files("#files", [str(store_csv(tmp_path / "店舗一覧.csv"))])
    page.wait_for_selector("#mapping .map-row")
    _no_sideways(page, "ingest with a table's preview")

    page.goto(base + "/dashboard")
    page.wait_for_selector("#cards .card")
    _no_sideways(page, "dashboard")

    page.goto(base + "/unanswered")
    page.wait_for_selector("#summary:not(:empty)")
    _no_sideways(page, "unanswered")

    page.goto(base + "/qa")
    page.wait_for_selector("#source option[value=manuals]", state="attached")
    page.click("#cli-mode summary")
    _no_sideways(page, "Q/A")

    page.goto(base + "/sql")
    page.wait_for_selector("#tables .card")
    page.fill("#sql", "SELECT * FROM stores LIMIT 5")
    page.click("#run")
    page.wait_for_selector("#result table")
    _no_sideways(page, "SQL with a wide result")

    page.goto(base + "/")
    _no_sideways(page, "overview")
    watched.assert_clean(live.base_url)


def test_the_weights_panel_shows_long_field_lists_whole(live, watched):
    """At 1280 px each axis card keeps its fields (opened under 詳細) inside its box."""
    fields = [f"effect_description_{n}" for n in range(1, 10)] + ["combined_text_for_search"]
    config = {
        "axes": [
            {"name": "effect_keyword", "mode": "bm25", "fields": fields, "weight": 0.4},
            {"name": "effect_semantic", "mode": "dense", "fields": fields, "weight": 0.3},
            {"name": "combined", "mode": "dense", "fields": ["combined"], "weight": 0.3},
        ]
    }
    with httpx.Client(base_url=live.base_url, timeout=60) as http:
        created = http.post("/api/collections", json={"name": "wide_axes", "config": config})
        assert created.status_code == 201, created.text
    page = watched.page
    page.goto(live.base_url + "/search?collection=wide_axes")
    page.wait_for_selector("#weights .card")
    labels = page.locator("#weights .card strong").all_inner_texts()
    assert labels == ["キーワード一致", "意味の近さ 1", "意味の近さ 2"]
    assert internal_words(page.locator("#weights").inner_text()) == []
    open_details(page, "#weights details")
    assert "effect_description_9" in page.locator("#weights .card").first.inner_text()
    clipped = page.locator("#weights .card").evaluate_all(
        "cs => cs.filter(c => c.scrollWidth > c.clientWidth + 1).length"
    )
    assert clipped == 0
    _no_sideways(page, "search with long field lists")
    watched.assert_clean(live.base_url)


def test_ai_answer_on_the_search_page(live, watched):
    page = watched.page
    search(page, live.base_url, "manuals", "爪の手入れ")
    button = page.locator("#ai-answer")
    assert button.inner_text() == "AIで回答"
    requests: list[dict] = []
    page.on(
        "request",
        lambda r: requests.append(r.post_data_json) if r.url.endswith("/api/ask") else None,
    )
    button.click()
    page.wait_for_selector("#ai-result .answer")
    assert requests == [{"question": "爪の手入れ", "collections": ["manuals"]}]
    assert "爪は短く切り" in page.locator("#ai-result .answer").inner_text()
    cite = page.locator("#ai-result .cites a").first
    assert cite.inner_text() == "衛生管理マニュアル v2.0"
    assert cite.get_attribute("href") == "/records/manuals/hygiene"
    assert not button.is_disabled()
    page.click("#run")  # a new search: the old answer goes
    page.wait_for_function("() => !document.querySelector('#ai-result .answer')")
    watched.assert_clean(live.base_url)


def test_ai_answer_says_why_it_failed(live, watched):
    """The answer's request fails (the server is gone): a Japanese message, the button usable."""
    page = watched.page
    search(page, live.base_url, "manuals", "爪の手入れ")
    page.route("**/api/ask", lambda route: route.abort())
    page.click("#ai-answer")
    error = page.locator("#ai-result .error")
    error.wait_for()
    assert error.inner_text().startswith("回答を作成できませんでした。サーバーに接続できません")
    assert internal_words(error.inner_text()) == []
    assert not page.locator("#ai-answer").is_disabled()
    watched.console.clear()  # the browser logs the failed request
    watched.assert_clean(live.base_url)


def test_skip_link_moves_to_the_content(live, watched):
    page = watched.page
    page.goto(live.base_url + "/dashboard")
    page.keyboard.press("Tab")
    skip = page.locator("a.skip")
    assert page.evaluate("document.activeElement.className") == "skip"
    assert skip.inner_text() == "本文へ移動"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.id === 'main'")
    watched.assert_clean(live.base_url)
