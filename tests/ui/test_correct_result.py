"""「正しい結果はこれ」 in a real browser: on the search page a hit is chosen as the result the
search should put first (👎 on a lower hit, 👍 on the first); in the chat, after 👎, one of
the answer's sources. Both are stored with the feedback as the correct result and come out of
``tansaku feedback judgements``."""

from __future__ import annotations

from .support import MANUAL_QUESTION


def _corrections(live) -> list[dict]:
    rows = live.state.appdb.feedback.find("default")
    return [r.meta["correct"] for r in rows if "correct" in r.meta]


def test_a_hit_is_chosen_as_the_correct_result_on_the_search_page(live, watched):
    page = watched.page
    page.goto(live.base_url + "/search?collection=manuals&q=" + MANUAL_QUESTION)
    page.wait_for_selector("#weights .card")
    page.click("#run")
    page.wait_for_selector("#hits .hit")
    button = page.locator("#hits .hit button.correct").last
    doc = button.get_attribute("data-doc")
    before = len(_corrections(live))
    button.click()
    page.wait_for_selector("#hits .hit .ok")
    assert "正しい結果として記録しました" in page.locator("#hits").inner_text()
    after = _corrections(live)
    assert len(after) == before + 1 and after[-1] == {"collection": "manuals", "doc_id": doc}
    watched.assert_clean(live.base_url)


def test_after_thumbs_down_a_source_is_chosen_in_the_chat(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    page.fill("#question", MANUAL_QUESTION)
    page.click("#send")
    page.wait_for_selector(".msg-bot:last-child .rate")
    bot = page.locator(".msg-bot").last
    bot.locator("button[aria-label=悪い]").click()
    pick = bot.locator(".correct-pick button.correct").first
    pick.wait_for()
    doc = pick.get_attribute("data-doc")
    before = len(_corrections(live))
    pick.click()
    page.wait_for_selector(".msg-bot:last-child .rate .ok >> text=正しい結果として記録しました")
    after = _corrections(live)
    assert len(after) == before + 1 and after[-1]["doc_id"] == doc
    watched.assert_clean(live.base_url)
