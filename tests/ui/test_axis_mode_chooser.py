"""The search test page lets each axis's mode be chosen (キーワード一致 / 意味の近さ / 文字の
並び): the search runs with the chosen modes, and the plan says which ran."""

from __future__ import annotations

import json


def test_an_axis_runs_in_the_mode_chosen_on_the_page(live, watched):
    page = watched.page
    page.goto(live.base_url + "/search?collection=manuals&q=手洗いの手順")
    page.wait_for_selector("#weights .card")
    chooser = page.locator("#weights select[data-mode=keyword]")
    assert chooser.input_value() == "bm25"
    options = chooser.locator("option").all_inner_texts()
    assert options == ["キーワード一致", "意味の近さ", "文字の並び"]
    chooser.select_option(label="文字の並び")
    page.uncheck("#weights input[data-axis=sentence]")  # two bigram axes would share a name
    with page.expect_request(lambda r: r.url.endswith("/api/search")) as sent:
        page.click("#run")
    axes = json.loads(sent.value.post_data or "{}")["axes"]
    assert [(a["name"], a["mode"]) for a in axes] == [("keyword", "bigram"), ("semantic", "dense")]
    page.wait_for_selector(".hit")
    page.set_viewport_size({"width": 375, "height": 800})
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    assert not wide
    watched.assert_clean(live.base_url)
