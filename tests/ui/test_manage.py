"""Managing the workspace from the browser: create and delete a collection (the delete asks to
type its name first), upload files as a job (one file fails with its reason, the others land)
and find the upload on the search test page with its per-axis ranks."""

from __future__ import annotations

from pathlib import Path


def test_create_and_delete_a_collection_with_confirmation(live, watched):
    page = watched.page
    page.goto(live.base_url + "/collections")
    page.wait_for_selector("#list tr[data-name=manuals]")
    page.fill("#new-name", "faq_test")
    page.fill("#new-description", "よくある質問(テスト)")
    page.click("#create button[type=submit]")
    row = page.locator("#list tr[data-name=faq_test]")
    row.wait_for()
    assert "よくある質問(テスト)" in row.inner_text()
    assert live.state.client.has_collection("faq_test")

    row.locator("button.danger").click()
    dialog = page.locator("#confirm")
    assert dialog.is_visible()
    ok = page.locator("#confirm-ok")
    assert ok.is_disabled()
    page.fill("#confirm-name", "faq_tes")
    assert ok.is_disabled()
    page.click("#confirm-cancel")
    assert not dialog.is_visible()
    assert live.state.client.has_collection("faq_test")  # cancelled: nothing deleted

    row.locator("button.danger").click()
    page.fill("#confirm-name", "faq_test")
    ok.click()
    page.wait_for_selector("#list tr[data-name=faq_test]", state="detached")
    assert not live.state.client.has_collection("faq_test")
    watched.assert_clean(live.base_url)


def test_upload_files_follow_the_job_and_find_them(live, watched, tmp_path: Path):
    page = watched.page
    guide = tmp_path / "開店準備.md"
    guide.write_text(
        "# 開店準備の手順\n\n## 釣り銭\n開店の30分前に、レジの釣り銭を二人で数えて記録します。\n\n"
        "## 客席\n客席とトイレを清掃し、メニュー表の汚れを拭き取ります。\n",
        encoding="utf-8",
    )
    broken = tmp_path / "壊れた資料.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not really a pdf")
    table = tmp_path / "faq.csv"
    table.write_text("question,answer\n釣り銭は何時に数える?,開店の30分前\n", encoding="utf-8")
    page.goto(live.base_url + "/ingest")
    page.fill("#collection", "uploads")
    page.set_input_files("#files", [str(guide), str(broken), str(table)])
    page.wait_for_selector("#preview table")
    assert "釣り銭は何時に数える?" in page.locator("#preview").inner_text()
    page.click("#start")
    page.wait_for_function(
        "() => /完了|失敗/.test(document.getElementById('job-status').textContent)"
    )
    status = page.locator("#job-status").inner_text()
    assert status.startswith("完了"), status
    failures = page.locator("ul.failures li")
    assert failures.count() == 1
    assert "壊れた資料.pdf" in failures.first.inner_text()

    page.goto(live.base_url + "/search?collection=uploads&q=釣り銭を数える")
    page.wait_for_selector("#weights .card")
    page.click("#run")
    page.wait_for_selector(".hit")
    heads = [h.inner_text() for h in page.locator(".hit .head").all()[:2]]
    # both uploads answer it: the guide's 釣り銭 section and the Q&A row, titled by its question
    assert any("開店準備の手順" in h for h in heads), heads
    assert any("釣り銭は何時に数える?" in h for h in heads), heads
    watched.assert_clean(live.base_url)


def test_search_page_shows_per_axis_ranks_weights_and_plan(live, watched):
    page = watched.page
    page.goto(live.base_url + "/search?collection=manuals&q=手洗いの手順")
    page.wait_for_selector("#weights .card")
    names = page.locator("#weights input[data-axis]").evaluate_all(
        "ns => ns.map(n => n.dataset.axis)"
    )
    assert names == ["keyword", "semantic", "sentence"]
    page.locator("input[data-axis=sentence]").uncheck()
    page.select_option("#fusion", "rrf")
    page.click("#run")
    page.wait_for_selector(".hit")
    first = page.locator(".hit").first
    keyword = first.locator("tr[data-axis=keyword] .rank")
    assert keyword.inner_text().endswith("位")
    assert first.locator("tr[data-axis=semantic]").count() == 1
    assert first.locator("tr[data-axis=keyword] td").first.inner_text() == "キーワード一致"
    plan = page.locator("#plan").inner_text()
    axes = plan.split("検索軸")[1].split("\n")[0]
    assert "キーワード一致(重み" in axes and "文字の並び" not in axes
    assert "順位の逆数和(定数 60)" in plan
    page.click("#plan details summary")  # the engine's own names are behind 詳細
    assert '"method": "rrf"' in page.locator("#plan details pre").inner_text()
    assert "合計" in page.locator("#timings").inner_text()
    watched.assert_clean(live.base_url)


def test_search_page_says_when_short_records_weigh_their_meaning_more(live, watched):
    """A collection on the default fusion: the plan says in words that short records' meaning
    axis weighs more; the 詳細 controls carry the collection's own setting, and a search with
    the weight set to 0 says nothing of it."""
    page = watched.page
    page.goto(live.base_url + "/search?collection=manuals&q=手洗いの手順")
    page.wait_for_selector("#weights .card")
    assert page.locator("#dense-length").input_value() == "83"
    page.click("#run")
    page.wait_for_selector(".hit")
    assert "83 語より短い記録ほど意味の軸を重く" in page.locator("#plan").inner_text()
    page.click("#advanced summary")
    page.select_option("#fusion", "linear")
    page.fill("#dense-length", "0")
    page.click("#run")
    page.wait_for_function(
        "() => !document.getElementById('plan').innerText.includes('語より短い記録')"
    )
    assert "平均からの隔たり" in page.locator("#plan").inner_text()
    watched.assert_clean(live.base_url)
