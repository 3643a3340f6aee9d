"""The search test page shows the zero-hit suggestion: the message, the rewordings as buttons
that search them, what to change, and what the search already tried behind a fold."""

from __future__ import annotations


def test_zero_hits_show_the_suggestion_and_search_a_rewording(live, watched):
    page = watched.page
    page.goto(live.base_url + "/search?collection=manuals&q=宇宙船の燃料補給")
    page.wait_for_selector("#weights .card")
    for axis in ("semantic", "sentence"):
        page.uncheck(f"#weights input[data-axis={axis}]")
    page.click("#run")
    box = page.locator("#hits .suggestion")
    box.wait_for()
    text = box.inner_text()
    assert "「宇宙船の燃料補給」に一致する結果はありませんでした" in text
    assert "別のコレクションでも検索してください" in text
    assert not page.locator("#hits .suggestion details ul").is_visible()  # folded
    page.click("#hits .suggestion button.suggested:has-text('宇宙船 燃料補給')")
    page.wait_for_function(
        "() => document.querySelector('#hits .suggestion p')?.textContent"
        ".startsWith('「宇宙船 燃料補給」に一致する結果はありませんでした')"
    )
    assert page.input_value("#query") == "宇宙船 燃料補給"
    watched.assert_clean(live.base_url)
