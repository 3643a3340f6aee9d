"""The merge form of the collections page: tick the sources, name the destination, pick what
happens to a document already there, and the page says what was merged."""

from __future__ import annotations


def test_merge_collections_from_the_collections_page(live, watched):
    page = watched.page
    client = live.state.client
    manuals = client.collection("manuals").store.count("default")
    page.goto(live.base_url + "/collections")
    page.wait_for_selector("#merge-sources input[value=manuals]")
    page.check("#merge-sources input[value=manuals]")
    page.fill("#merge-into", "manuals_all")
    page.click("#merge-run")
    result = page.locator("#merge-result")
    page.wait_for_function(
        "() => document.getElementById('merge-result').textContent.includes('統合しました')"
    )
    assert "「manuals」を「manuals_all」を作成して統合しました" in result.inner_text()
    row = page.locator("#list tr[data-name=manuals_all]")
    row.wait_for()
    assert client.collection("manuals_all").store.count("default") == manuals
    before = {r.record.id for r in client.collection("manuals").store.scan("default")}
    after = {r.record.id for r in client.collection("manuals_all").store.scan("default")}
    assert after == before  # the records kept their ids

    # again, keeping what is there: every document is left out as a duplicate
    page.check("#merge-sources input[value=manuals]")  # the list was reloaded
    page.fill("#merge-into", "manuals_all")
    page.click("#merge-run")
    page.wait_for_function(
        "() => document.getElementById('merge-result').textContent.includes('除外')"
        " && !document.getElementById('merge-result').textContent.includes('作成して')"
    )
    assert "文書 0 件" in result.inner_text()

    # nothing ticked: the page says so and sends nothing
    for box in page.locator("#merge-sources input:checked").all():
        box.uncheck()
    page.click("#merge-run")
    assert "1つ以上選んでください" in result.inner_text()
    # a collection merged into itself: the API's Japanese message is shown
    page.check("#merge-sources input[value=reports]")
    page.fill("#merge-into", "reports")
    page.click("#merge-run")
    page.wait_for_function(
        "() => document.getElementById('merge-result').textContent.includes('自分自身')"
    )
    assert watched.console == [
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]
    watched.console.clear()  # the refused request's 400, logged by the browser
    watched.assert_clean(live.base_url)
