"""The 説明 page explains what happens from an upload to an answer and where each kind of
data lives in the workspace, in Japanese and without sideways scrolling on a phone."""

from __future__ import annotations


def test_the_overview_explains_the_data_flow_and_the_folders(live, watched):
    page = watched.page
    page.goto(live.base_url + "/")
    flow = page.locator("ol.flow li")
    assert flow.count() == 6
    steps = [flow.nth(i).locator("strong").inner_text() for i in range(6)]
    assert steps == ["取り込み", "解析と埋め込み", "保存", "検索", "回答", "改善"]
    assert "出典つきで答えます" in flow.nth(4).inner_text()
    folders = page.locator("table.folders")
    text = folders.inner_text()
    for place in (
        "collections/名前/config.toml",
        "cache/embeddings.sqlite",
        "app.db",
        "tables.toml",
    ):
        assert place in text
    assert "TANSAKU_HOME" in page.locator("#folders + p").inner_text()
    assert str(live.state.client.workspace.home) not in page.content()  # no server path shown
    page.set_viewport_size({"width": 375, "height": 800})
    assert not page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    watched.assert_clean(live.base_url)
