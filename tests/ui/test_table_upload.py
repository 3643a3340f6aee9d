"""The upload page registers a CSV as a table: choosing the file shows each column's inferred
type, description and example; a corrected type and description are what gets registered."""

from __future__ import annotations

from pathlib import Path


def test_a_csv_becomes_a_table_with_corrected_types(live, watched, tmp_path: Path):
    page = watched.page
    menu = tmp_path / "menu.csv"
    menu.write_text(
        "品名,価格,販売開始日,辛さ\n麻婆豆腐,980,2025-04-01,3\n杏仁豆腐,450,2025-04-01,0\n",
        encoding="utf-8",
    )
    page.goto(live.base_url + "/ingest")
    page.set_input_files("#table-file", str(menu))
    page.wait_for_selector("#table-inferred:not(.hidden)")
    assert page.input_value("#table-name") == "menu"
    rows = page.locator("#table-columns tbody tr")
    assert rows.count() == 4
    price = rows.nth(1)
    assert "価格" in price.inner_text()
    assert price.locator("select").input_value() == "INTEGER"
    assert rows.nth(2).locator("select").input_value() == "DATE"
    assert "2 行を読んで推定しました" in page.locator("#table-status").inner_text()
    price.locator("select").select_option(label="小数")
    page.fill("#table-description", "中華料理店のメニュー")
    page.click("#table-register")
    page.wait_for_function(
        "() => document.getElementById('table-status').textContent.includes('登録しました')"
    )
    tables = live.state.tables()
    spec = tables.config.table("menu")
    assert spec.description == "中華料理店のメニュー"
    assert [c.type.value for c in spec.columns] == ["TEXT", "DOUBLE", "DATE", "INTEGER"]
    page.set_viewport_size({"width": 375, "height": 800})
    assert not page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    watched.assert_clean(live.base_url)
