"""A team's own FAQ, uploaded as a CSV on the upload page, answers in the chat page with only it
ticked: the answer quotes the FAQ's answer and cites it; an off-topic question is declined."""

from __future__ import annotations

from pathlib import Path

from .test_ingest_mapping_ui import role

FAQ = [
    ("id", "質問", "回答"),
    (
        "faq-01",
        "有給休暇の申請方法を教えてください",
        "勤怠システムの休暇申請画面から、取得日の3営業日前までに申請してください。",
    ),
    (
        "faq-02",
        "交通費の精算はいつまでですか",
        "利用した月の翌月5日までに経費精算システムで申請してください。",
    ),
    (
        "faq-03",
        "社員証をなくしたときは",
        "総務部に紛失届を出してください。再発行には5営業日かかります。",
    ),
]


def upload_faq(page, base_url: str, tmp_path: Path) -> None:
    csv = tmp_path / "社内FAQ.csv"
    csv.write_text("\n".join(",".join(row) for row in FAQ) + "\n", encoding="utf-8")
    page.goto(base_url + "/ingest")
    page.fill("#collection", "faq")
    page.set_input_files("#files", [str(csv)])
    page.wait_for_selector("#mapping .map-row")
    role(page, "id", "id")
    role(page, "質問", "title")
    role(page, "回答", "text", "body")
    page.click("#start")
    page.wait_for_function(
        "() => /完了|失敗/.test(document.getElementById('job-status').textContent)"
    )
    assert page.locator("#job-status").inner_text().startswith("完了")


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#send")
    page.wait_for_selector(".msg-bot:last-child .rate, .msg-bot:last-child .error")


def test_an_uploaded_faq_answers_in_the_chat_with_only_it_ticked(live, watched, tmp_path: Path):
    page = watched.page
    upload_faq(page, live.base_url, tmp_path)
    page.goto(live.base_url + "/chat")
    page.wait_for_selector("#collections input[value=faq]")
    for box in page.locator("#collections input[type=checkbox]").all():
        box.set_checked(box.get_attribute("value") == "faq")
    ask(page, "有給休暇はどうやって申請しますか？")
    bot = page.locator(".msg-bot").last
    assert "勤怠システムの休暇申請画面" in bot.locator(".answer").inner_text()
    cite = bot.locator(".cites a").first
    assert cite.get_attribute("href") == "/records/faq/faq-01"
    assert bot.locator(".cites .tag").first.inner_text() == "faq"
    trace = bot.locator(".trace").text_content() or ""
    assert "faq" in trace and "{" not in trace  # the thoughts say what was searched, no JSON

    ask(page, "明日の東京の天気は？")
    declined = page.locator(".msg-bot").last
    assert "見つかりませんでした" in declined.locator(".answer").inner_text()
    assert declined.locator(".cites a").count() == 0
    watched.assert_clean(live.base_url)
