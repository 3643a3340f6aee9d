"""The Q/A生成 page in a real browser: with a model configured (the fake OpenAI server over HTTP
on 127.0.0.1) the page starts a server job, shows chunks done / total while it runs, and the
generated pairs are found on the search test page afterwards; without one it shows the server's
Japanese refusal."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest

LLM_ENV = (
    "TANSAKU_LLM_PROVIDER",
    "TANSAKU_LLM_BASE_URL",
    "TANSAKU_LLM_MODEL",
    "TANSAKU_LLM_API_KEY",
)
_SENTENCE = re.compile(r"[^。\n]{8,}。")


def _chunk(prompt: str) -> str:
    return prompt.split("# テキスト\n", 1)[1].split("\n\n# 出力フォーマット", 1)[0]


def _use_model(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "openai")
    monkeypatch.setenv("TANSAKU_LLM_BASE_URL", base_url)
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("TANSAKU_LLM_API_KEY", "sk-ui-test")


def test_qa_job_shows_progress_and_its_pairs_are_searchable(live, watched, monkeypatch):
    from tansaku.testing import FakeOpenAIServer, Reply

    release = threading.Event()
    lock = threading.Lock()
    answers: list[str] = []

    def handler(turn: Any) -> Reply:
        with lock:
            first = not answers
            sentence = (_SENTENCE.findall(_chunk(turn.last.content)) or ["本文の内容です。"])[0]
            answers.append(sentence.strip())
        if not first:
            release.wait(60)  # the page must show 1 of 4 before the rest are answered
        pair = {"question": f"{sentence.strip()[:30]}とはどういうことですか?", "answer": sentence}
        return Reply.say(json.dumps({"qa_pairs": [pair]}, ensure_ascii=False))

    with FakeOpenAIServer(api_key="sk-ui-test", model="gpt-4o-mini", handler=handler) as srv:
        _use_model(monkeypatch, srv.base_url)
        page = watched.page
        page.goto(live.base_url + "/qa")
        page.wait_for_selector("#source option[value=manuals]", state="attached")
        page.select_option("#source", "manuals")
        page.fill("#target", "hygiene_qa")
        page.fill("#per-chunk", "2")
        page.fill("#limit", "4")
        assert page.locator("#command").text_content() == (
            "tansaku qa generate --from manuals --into hygiene_qa --per-chunk 2 --limit 4"
        )
        page.click("#start")
        try:
            page.wait_for_function(
                "() => document.getElementById('job-count').textContent.includes('チャンク 1 / 4')"
            )
            assert "生成中" in page.locator("#job-status").inner_text()
            assert page.locator("#job-bar").evaluate("b => [b.value, b.max]") == [1, 4]
            assert page.locator("#start").is_disabled()
        finally:
            release.set()
        page.wait_for_selector("#try-search")
        assert "完了" in page.locator("#job-status").inner_text()
        assert "4 チャンク(今回生成 4" in page.locator("#job-result .summary").inner_text()
        assert len(srv.turns) == 4
    answer = answers[-1]
    page.click("#try-search")
    page.wait_for_url("**/search?collection=hygiene_qa")
    page.wait_for_selector("#weights .card")
    page.fill("#query", answer)
    page.click("#run")
    page.wait_for_selector(".hit")
    assert answer in page.locator(".hit .text").first.inner_text()
    assert page.locator(".hit a").first.inner_text() == "衛生管理マニュアル v2.0"
    watched.assert_clean(live.base_url)


def test_without_a_model_the_page_shows_why(live, watched, monkeypatch):
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)
    page = watched.page
    page.goto(live.base_url + "/qa")
    page.wait_for_selector("#source option[value=manuals]", state="attached")
    page.select_option("#source", "manuals")
    page.click("#start")
    page.wait_for_selector("#job-result .error")
    assert "Q/A の生成には言語モデルが必要です" in page.locator("#job-result .error").inner_text()
    assert not page.locator("#start").is_disabled()
    assert page.locator("#job-bar").is_hidden()  # no job: no empty progress bar over the message
    assert page.locator("#job-id").is_hidden()
    watched.console.clear()  # the browser logs the refused request's 409
    watched.assert_clean(live.base_url)
