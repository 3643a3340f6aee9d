"""The chat page in a real browser: streamed events, an answer with a citation that opens its
record, 👎 with a reason stored through the feedback API (meta from the server) and seen on the
dashboard, an unanswerable question in the unanswered log."""

from __future__ import annotations

from tansaku.appdb.unanswered import QuestionFilter

from .support import MANUAL_QUESTION


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#send")
    page.wait_for_selector(".msg-bot:last-child .rate, .msg-bot:last-child .error")


def test_chat_streams_events_and_answers_with_a_citation(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.wait_for_selector("#collections input[value=manuals]")
    ask(page, MANUAL_QUESTION)
    bot = page.locator(".msg-bot").last
    kinds = bot.locator(".trace [data-type]").evaluate_all("ns => ns.map(n => n.dataset.type)")
    assert "thought" in kinds and "tool_call" in kinds and "tool_result" in kinds
    assert bot.locator(".trace summary").first.inner_text().startswith("考えとツール呼び出し(")
    assert "(衛生管理マニュアル" in bot.locator(".answer").inner_text()
    cite = bot.locator(".cites a").first
    assert cite.inner_text() == "衛生管理マニュアル v2.0"
    assert cite.get_attribute("href") == "/records/manuals/hygiene"
    page.goto(live.base_url + cite.get_attribute("href"))
    assert page.locator("h1").inner_text() == "衛生管理マニュアル v2.0"
    assert "健康チェック表" in page.locator("main").inner_text()
    watched.assert_clean(live.base_url)


def test_thumbs_down_with_a_reason_is_stored_and_counted(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    ask(page, MANUAL_QUESTION)
    bot = page.locator(".msg-bot").last
    bot.locator(".rate input").fill("身だしなみの章が出てこない <b>太字</b>")
    bot.locator("button[aria-label=悪い]").click()
    page.wait_for_selector(".msg-bot:last-child .rate .ok")
    rows = live.state.appdb.feedback.find("default", rating=-1)
    assert len(rows) == 1
    row = rows[0]
    assert row.reason is not None and "身だしなみの章が出てこない" in row.reason
    assert "<b>" not in row.reason  # escaped by the server
    assert row.meta["query"] == MANUAL_QUESTION  # rebuilt from the server's answer event
    page.goto(live.base_url + "/dashboard")
    page.wait_for_selector("#cards .card")
    cards = page.locator("#cards").inner_text()
    assert "👎 1" in cards
    watched.assert_clean(live.base_url)


def test_unanswered_question_is_listed_resolved_and_exported(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    ask(page, "宇宙船の燃料補給の手順を教えて")
    assert page.locator(".msg-bot").last.locator(".warn").count() == 1
    page.goto(live.base_url + "/unanswered")
    row = page.locator("#list tr", has_text="宇宙船の燃料補給の手順を教えて")
    row.wait_for()
    with page.expect_download() as download:
        page.click("#csv")
    text = download.value.path().read_text(encoding="utf-8-sig")
    assert "宇宙船の燃料補給の手順を教えて" in text.splitlines()[1] or "宇宙船" in text
    row.locator("input").fill("マニュアルの対象外と回答する")
    row.locator("button.resolve").click()
    page.wait_for_function(
        "() => ![...document.querySelectorAll('#list td.question')]"
        ".some(td => td.textContent.includes('宇宙船'))"
    )
    resolved = live.state.appdb.unanswered.find("default", QuestionFilter(resolved=True))
    assert any(i.resolution == "マニュアルの対象外と回答する" for i in resolved)
    watched.assert_clean(live.base_url)


def test_a_language_model_answer_shows_its_draft_and_reflection(live, watched, monkeypatch):
    """With a chat model configured (the fake OpenAI server over HTTP on 127.0.0.1), the page
    shows the model's thought, its tool call, the draft and the reflection's critique."""
    import json

    from tansaku.testing import FakeOpenAIServer, Reply

    answer = "身だしなみは清潔なユニフォーム・帽子・マスクを着用します[1]。"
    with FakeOpenAIServer(api_key="sk-ui-test", model="gpt-4o-mini") as srv:
        srv.script(
            Reply.call("search_manual", {"query": "身だしなみ"}),
            Reply.say("思考: マニュアルの1.3に書かれています。\n回答: " + answer),
            Reply.say(
                json.dumps(
                    {"critique": "出典と一致しています", "status": "answered", "answer": answer}
                )
            ),
        )
        monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "openai")
        monkeypatch.setenv("TANSAKU_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
        monkeypatch.setenv("TANSAKU_LLM_API_KEY", "sk-ui-test")
        page = watched.page
        page.goto(live.base_url + "/chat")
        page.click("#new-conversation")
        ask(page, "身だしなみのルールは?")
        bot = page.locator(".msg-bot").last
        assert bot.locator(".answer").inner_text() == answer
        assert "出典と一致しています" in bot.locator(".reflection").inner_text()
        kinds = bot.locator(".trace [data-type]").evaluate_all("ns => ns.map(n => n.dataset.type)")
        assert "tool_call" in kinds and "critique" in kinds
        assert bot.locator(".cites a").first.get_attribute("href") == "/records/manuals/hygiene"
    watched.assert_clean(live.base_url)


def test_events_are_shown_while_the_turn_is_still_running(live, watched, monkeypatch):
    """The fake model holds its second reply until the test has seen the tool call on the page:
    the events are rendered from the stream as they happen, before the answer exists."""
    import json
    import threading

    from tansaku.testing import FakeOpenAIServer, Reply

    release = threading.Event()
    answer = "手洗いの手順はマニュアルにあります[1]。"
    calls = {"n": 0}

    def handler(turn):
        calls["n"] += 1
        if calls["n"] == 1:
            release.wait(60)
            return Reply.say("回答: " + answer)
        return Reply.say(
            json.dumps({"critique": "問題なし", "status": "answered", "answer": answer})
        )

    with FakeOpenAIServer(api_key="sk-ui-test", model="gpt-4o-mini", handler=handler) as srv:
        srv.script(Reply.call("search_manual", {"query": "手洗い"}))
        monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "openai")
        monkeypatch.setenv("TANSAKU_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
        monkeypatch.setenv("TANSAKU_LLM_API_KEY", "sk-ui-test")
        page = watched.page
        page.goto(live.base_url + "/chat")
        page.click("#new-conversation")
        page.fill("#question", "手洗いの手順は?")
        page.click("#send")
        page.wait_for_selector(".msg-bot .trace [data-type=tool_call]")
        try:
            assert page.locator(".msg-bot .answer.pending").count() == 1
            assert page.locator(".msg-bot .rate").count() == 0
        finally:
            release.set()
        page.wait_for_selector(".msg-bot .rate")
        assert page.locator(".msg-bot .answer").inner_text() == answer
    watched.assert_clean(live.base_url)


def test_the_conversation_continues_and_survives_a_reload(live, watched):
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    ask(page, MANUAL_QUESTION)
    page.reload()
    page.wait_for_selector(".msg-bot .rate")
    assert page.locator(".msg-user").all_inner_texts() == [MANUAL_QUESTION]
    label = page.locator("#conversation-label")
    assert label.inner_text() == "会話中(1 往復)"  # the id is data, not text
    assert label.get_attribute("data-id") == page.evaluate(
        "JSON.parse(sessionStorage.getItem('tansaku.chat')).conversationId"
    )
    ask(page, "帽子についてもう少し詳しく")
    turns = page.evaluate("JSON.parse(sessionStorage.getItem('tansaku.chat')).turns")
    ids = {t["final"]["conversation_id"] for t in turns}
    assert len(turns) == 2 and len(ids) == 1
    page.click("#new-conversation")
    assert page.locator(".msg-user").count() == 0
    assert page.locator("#conversation-label").inner_text() == ""
    watched.assert_clean(live.base_url)


SAVED_WHEN_SHOWN = """
new MutationObserver((changes, observer) => {
  if (!document.querySelector('.msg-bot .rate')) return;
  window.__savedWhenShown = sessionStorage.getItem('tansaku.chat');
  observer.disconnect();
}).observe(document, { childList: true, subtree: true });
"""


def test_an_answer_is_kept_by_the_time_it_is_shown(live, watched):
    """The turn is in the tab's storage when its answer appears, not only once the stream has
    closed: a reload right after the answer shows must not lose it."""
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    page.evaluate(SAVED_WHEN_SHOWN)
    ask(page, MANUAL_QUESTION)
    saved = page.evaluate("JSON.parse(window.__savedWhenShown)")
    assert [t["question"] for t in saved["turns"]] == [MANUAL_QUESTION]
    assert saved["turns"][0]["final"]["answer"]
    assert saved["conversationId"] == saved["turns"][0]["final"]["conversation_id"]
    watched.assert_clean(live.base_url)


def wait_rounds(page, conversation_id: str, rounds: int) -> None:
    """Until the history lists ``conversation_id`` with ``rounds`` questions and answers."""
    page.wait_for_function(
        "([id, text]) => [...document.querySelectorAll('#history button')]"
        ".some(b => b.dataset.id === id && b.textContent.includes(text))",
        arg=[conversation_id, f"{rounds} 往復"],
    )


def test_past_conversations_are_listed_and_reopened(live, watched):
    """The history panel lists the team's conversations (GET /api/conversations); opening one
    in a fresh tab shows its turns with their citations, and a follow-up continues it."""
    from .support import HOSTILE

    page = watched.page
    page.goto(live.base_url + "/chat")
    page.click("#new-conversation")
    ask(page, MANUAL_QUESTION)
    ask(page, "帽子についてもう少し詳しく")
    first = page.evaluate("JSON.parse(sessionStorage.getItem('tansaku.chat')).conversationId")
    wait_rounds(page, first, 2)  # the list is fetched again after each answer
    entry = page.locator(f"#history button[data-id='{first}']")
    assert entry.get_attribute("aria-current") == "true"
    assert entry.inner_text().startswith(MANUAL_QUESTION)
    page.click("#new-conversation")
    assert entry.get_attribute("aria-current") is None
    hostile = f"{HOSTILE} の手順は?"
    ask(page, hostile)
    second = page.locator("#history button[aria-current=true]")
    second.wait_for()
    assert second.inner_text().startswith(hostile)  # shown as the characters it is
    assert page.locator("#history li").first.inner_text().startswith(hostile)  # newest first

    page.evaluate("sessionStorage.clear()")  # as a new tab: nothing of its own
    page.reload()
    assert page.locator(".msg-user").count() == 0
    page.locator(f"#history button[data-id='{first}']").click()
    page.wait_for_selector(".msg-bot .answer")
    assert page.locator(".msg-user").all_inner_texts() == [
        MANUAL_QUESTION,
        "帽子についてもう少し詳しく",
    ]
    bot = page.locator(".msg-bot").first
    assert "(衛生管理マニュアル" in bot.locator(".answer").inner_text()
    assert bot.locator(".cites a").first.get_attribute("href") == "/records/manuals/hygiene"
    assert bot.locator(".rate button[aria-label=悪い]").count() == 1  # rated as it was
    assert page.locator("#conversation-label").get_attribute("data-id") == first
    ask(page, "マスクについても教えて")
    turns = page.evaluate("JSON.parse(sessionStorage.getItem('tansaku.chat')).turns")
    assert len(turns) == 3 and turns[-1]["final"]["conversation_id"] == first
    wait_rounds(page, first, 3)
    assert page.locator("#history li").first.locator("button").get_attribute("data-id") == first
    watched.assert_clean(live.base_url)


def test_enter_sends_and_shift_enter_breaks_the_line(live, watched):
    """As chat tools do: the question box has the focus, Shift+Enter adds a line, Enter sends
    (an Enter that confirms an IME conversion is the IME's — Chromium marks it isComposing)."""
    page = watched.page
    page.goto(live.base_url + "/chat")
    page.wait_for_selector("#collections input[value=manuals]")
    assert page.evaluate("document.activeElement.id") == "question"
    assert "Enter で送信" in page.locator("#question-hint").inner_text()
    page.keyboard.type("身だしなみとして")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("爪はどうする?")
    assert page.input_value("#question") == "身だしなみとして\n爪はどうする?"
    assert page.locator(".msg-user").count() == 0
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg-bot:last-child .rate, .msg-bot:last-child .error")
    assert page.locator(".msg-user").count() == 1
    watched.assert_clean(live.base_url)
