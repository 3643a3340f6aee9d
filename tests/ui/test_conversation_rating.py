"""Rating answers of a conversation reopened from the history, in a real browser: the stored turn
keeps the query_id of its answer event, so 👎 with a reason goes through the feedback API (meta
rebuilt on the server from that event) and shows on the dashboard; an answer stored before
turns kept their query_id shows why it cannot be rated, as a tooltip."""

from __future__ import annotations

from .support import MANUAL_QUESTION

REASON = "身だしなみの章が引用されていない <b>太字</b>"


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#send")
    page.wait_for_selector(".msg-bot:last-child .rate, .msg-bot:last-child .error")


def reopen(page, conversation_id: str) -> None:
    """As a new tab (nothing in sessionStorage), open ``conversation_id`` from the history."""
    page.evaluate("sessionStorage.clear()")
    page.reload()
    assert page.locator(".msg-user").count() == 0
    page.locator(f"#history button[data-id='{conversation_id}']").click()
    page.wait_for_selector(".msg-bot .answer:not(.pending)")


def test_a_reopened_answer_is_rated_and_counted_on_the_dashboard(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    ask(page, MANUAL_QUESTION)
    ask(page, "帽子についてもう少し詳しく")
    cid = page.evaluate("JSON.parse(sessionStorage.getItem('tansaku.chat')).conversationId")
    live_ids = page.evaluate(
        "JSON.parse(sessionStorage.getItem('tansaku.chat')).turns.map(t => t.queryId)"
    )
    page.wait_for_selector(f"#history button[data-id='{cid}']")

    reopen(page, cid)
    assert page.locator(".msg-user").all_inner_texts() == [
        MANUAL_QUESTION,
        "帽子についてもう少し詳しく",
    ]
    stored = page.evaluate(
        "JSON.parse(sessionStorage.getItem('tansaku.chat')).turns.map(t => t.queryId)"
    )
    assert stored == live_ids and all(stored)  # the ids the live answers were rated by
    first = page.locator(".msg-bot").first
    assert first.locator(".trace").is_hidden()  # past turns keep no events
    reason = first.locator(".rate input")
    reason.focus()
    page.keyboard.type(REASON)
    page.keyboard.press("Tab")  # 👍
    page.keyboard.press("Tab")  # 👎
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "悪い"
    page.keyboard.press("Enter")
    first.locator(".rate .ok").wait_for()
    assert "👎" in first.locator(".rate").inner_text()

    rows = live.state.appdb.feedback.find("default", rating=-1)
    assert len(rows) == 1
    row = rows[0]
    assert row.query_id == live_ids[0]
    assert row.reason is not None and "身だしなみの章が引用されていない" in row.reason
    assert "<b>" not in row.reason  # escaped by the server
    assert row.meta["query"] == MANUAL_QUESTION  # rebuilt from the server's answer event
    assert row.meta["query_type"] == "ask"

    reopen(page, cid)  # opened again: the rating is remembered, not offered twice
    assert "👎 評価済み" in page.locator(".msg-bot").first.locator(".rate").inner_text()
    assert page.locator(".msg-bot").nth(1).locator(".rate button[aria-label=良い]").count() == 1

    page.goto(live.base_url + "/dashboard")
    page.wait_for_selector("#cards .card")
    assert "👎 1" in page.locator("#cards").inner_text()
    page.wait_for_selector("#types table")
    answers = page.locator("#types tr", has_text="エージェント対話の回答")  # query type ask
    assert answers.locator("td").nth(3).inner_text() == "1"
    watched.assert_clean(live.base_url)


def test_an_answer_stored_without_its_query_id_says_why_it_cannot_be_rated(live, watched):
    from tansaku.agent import conversations

    convs = conversations(live.state.client)
    cid = convs.new("default")
    convs.append(cid, "default", "user", "冷蔵庫の温度が上がったときの対応は?")
    convs.append(cid, "default", "assistant", "庫内温度を記録し、店長に報告します。")  # as before
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.wait_for_selector(f"#history button[data-id='{cid}']")
    reopen(page, cid)
    rate = page.locator(".msg-bot").first.locator(".rate")
    assert rate.locator("button").count() == 0 and rate.locator("input").count() == 0
    note = rate.locator(".no-rating")
    assert note.inner_text().startswith("この回答は評価できません")
    tip = note.get_attribute("title")
    assert tip is not None and "query_id" in tip and "あとから評価できません" in tip
    note.focus()  # reachable from the keyboard, its explanation in the accessible name
    assert "あとから評価できません" in (note.get_attribute("aria-label") or "")
    ask(page, "マスクについても教えて")  # a new answer in the same conversation: ratable
    reopen(page, cid)
    bots = page.locator(".msg-bot")
    assert bots.count() == 2
    assert bots.nth(0).locator(".rate .no-rating").count() == 1
    assert bots.nth(1).locator(".rate button[aria-label=悪い]").count() == 1
    watched.assert_clean(live.base_url)
