"""The reset button of the collections page: it asks for the team's name before removing
every record of the team, then says what it removed."""

from __future__ import annotations


def test_reset_the_teams_collections_after_typing_its_name(live, watched):
    page = watched.page
    client = live.state.client
    page.goto(live.base_url + "/collections")
    page.wait_for_selector("#list tr[data-name=manuals]")
    dialog = page.locator("#reset-confirm")
    ok = page.locator("#reset-ok")

    page.click("#reset-open")
    assert dialog.is_visible()
    assert ok.is_disabled()
    page.fill("#reset-name", "defaul")
    assert ok.is_disabled()
    page.click("#reset-cancel")
    assert not dialog.is_visible()
    assert client.has_collection("manuals")  # cancelled: nothing removed

    reports = client.collection("reports").store.count("default")
    manuals = client.collection("manuals").store.count("default")
    page.click("#reset-open")
    page.fill("#reset-name", "default")
    ok.click()
    page.wait_for_function(
        "() => document.getElementById('reset-result').textContent.includes('削除しました')"
    )
    text = page.locator("#reset-result").inner_text()
    assert f"記録 {reports + manuals:,} 件を 2 個のコレクションから削除しました" in text
    assert "「manuals」" in text and "「reports」" in text
    assert not client.has_collection("manuals") and not client.has_collection("reports")
    page.wait_for_selector("#list p.note")  # no collection left
    watched.assert_clean(live.base_url)
