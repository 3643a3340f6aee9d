"""The upload page's 「URL から取り込む」 form: a Japanese JSONL dataset on a local fake dataset
host (allowed by ``[fetch] allow_hosts``) is downloaded and ingested as a job shown on the page;
a host that is not allowed is refused with a Japanese message; no horizontal scroll at 375 px."""

from __future__ import annotations

import json

from tansaku.testing.fake_dataset_server import FakeDatasetServer

FAQ = [
    {"id": "kyuka", "title": "有給休暇の申請", "text": "有給休暇は勤怠システムから申請します。"},
    {"id": "keihi", "title": "経費精算の締め日", "text": "経費精算の締め日は毎月25日です。"},
]
JSONL = "\n".join(json.dumps(r, ensure_ascii=False) for r in FAQ).encode("utf-8") + b"\n"


def test_a_dataset_is_imported_from_a_url(live, watched):
    home = live.state.client.workspace.home
    with (home / "tansaku.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[fetch]\nallow_hosts = ["127.0.0.1"]\n')
    page = watched.page
    with FakeDatasetServer({"/faq-ja.jsonl": JSONL}) as site:
        page.set_viewport_size({"width": 375, "height": 800})
        page.goto(live.base_url + "/ingest")
        assert "URL から取り込む" in page.locator("h2").all_inner_texts()
        page.fill("#fetch-collection", "faq-web")
        port = site.url.rsplit(":", 1)[1]
        page.fill("#fetch-url", f"http://localhost:{port}/faq-ja.jsonl")
        page.click("#fetch-start")
        page.wait_for_selector("#fetch-errors .error")
        message = page.locator("#fetch-errors").inner_text()
        assert "ホスト「localhost」からは取り込めません" in message
        assert site.requests == []
        # the refusal's 403 is the one console line Chromium logs; nothing else may appear
        assert len(watched.console) == 1 and "403" in watched.console[0]
        watched.console.clear()
        page.fill("#fetch-url", f"{site.url}/faq-ja.jsonl")
        page.click("#fetch-start")
        page.wait_for_function(
            "() => document.getElementById('job-status').textContent.startsWith('完了')"
        )
        assert "追加 2 件" in page.locator("#job-result").inner_text()
        assert "faq-web" in page.locator("#job-status").inner_text()
        assert not page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    hits = live.state.client.search("経費精算の締め日", collection="faq-web").hits
    assert any("25日" in json.dumps(h.to_dict(), ensure_ascii=False) for h in hits)
    watched.assert_clean(live.base_url)
