"""The README's main job: `tansaku demo` over the bundled examples, idempotent, with the real
embedder; built for the reference day 2025-12-11 (the demo's data is relative to its day)."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.cli.main import app
from tansaku.demo.build import DEMO_COLLECTIONS, SAMPLE_QUERIES, build_demo, demo_hints
from tansaku.demo.days import REFERENCE_NOW
from tansaku.text.dates import TOKYO

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ZERO_HIT_QUERIES = {
    "フィールドのカードを手札に戻すカード": {
        "10000810",
        "10100310",
        "10100420",
        "10300120",
        "10300810",
        "10400110",
    },
    "相手のリーダーにダメージを与えるカード": {
        "10100610",
        "10300620",
        "10400510",
        "10500510",
        "10600110",
        "10600310",
        "10600520",
        "10600610",
    },
    "ランダムな相手のフォロワーにダメージを与えるカード": {
        "10000420",
        "10100210",
        "10300220",
        "10300330",
        "10500510",
    },
}


def test_demo_build_is_idempotent_and_answers_its_samples(tmp_path):
    home = tmp_path / "demo"
    with tansaku.connect(home) as ts:
        first = build_demo(ts, now=REFERENCE_NOW)
        assert set(first) == {d.name for d in DEMO_COLLECTIONS}
        assert all(r.ok and r.inserted > 0 for r in first.values())
        second = build_demo(ts, now=REFERENCE_NOW)
        for name, report in second.items():
            assert (report.inserted, report.updated, report.deleted, report.embedded) == (
                0,
                0,
                0,
                0,
            ), name
        for sample in SAMPLE_QUERIES:
            res = ts.search(sample.query, collection=sample.collection, top_k=3, now=REFERENCE_NOW)
            assert res.hits, sample
        # 「昨日のクレーム」 and 「先週の冷蔵庫のトラブル」 asked on the day the demo was built for.
        res = ts.search("昨日のクレーム", collection="reports", now=REFERENCE_NOW)
        assert {h.record.metadata["date"] for h in res.hits} == {"2025-12-10"}
        assert "料理の温度が低い" in " ".join(h.record.text for h in res.hits[:3])
        res = ts.search("先週の冷蔵庫のトラブル", collection="reports", now=REFERENCE_NOW)
        assert all("2025-12-01" <= h.record.metadata["date"] <= "2025-12-07" for h in res.hits)
        assert "ウォークイン冷蔵庫" in " ".join(h.record.text for h in res.hits[:3])
        # 「昨日の問題」 of the designs: the 2025-12-10 claims and troubles are in the data.
        day = tansaku.Filter(date_from=date(2025, 12, 10), date_to=date(2025, 12, 10))
        res = ts.search("クレーム トラブル 故障", collection="reports", filter=day, top_k=10)
        texts = " ".join(h.record.text for h in res.hits)
        assert "クレーム" in texts and "故障" in texts
        assert {h.record.metadata["date"] for h in res.hits} == {"2025-12-10"}

        # Query understanding: 「昨日の問題」 asked on 2025-12-11, with the real embedder.
        now = datetime(2025, 12, 11, 10, 0, tzinfo=TOKYO)
        res = ts.search("昨日の問題", collection="reports", now=now)
        assert len(res.plan.stage.expanded_queries) >= 3
        assert {h.record.metadata["date"] for h in res.hits} == {"2025-12-10"}
        top = " ".join(h.record.text for h in res.hits[:4])
        assert "クレーム" in top and "故障" in top
        # The three queries that returned nothing in the card design: relevant cards in top 10.
        for query, relevant in ZERO_HIT_QUERIES.items():
            docs = [h.doc_id for h in ts.search(query, collection="cards", top_k=10).hits]
            found = set(docs) & relevant
            assert len(found) >= 3, (query, docs)

    runner = CliRunner()
    out = runner.invoke(app, ["demo", "--home", str(home), "--now", "2025-12-11"])
    assert out.exit_code == 0, out.output
    assert "冷蔵庫の故障" in out.stdout
    assert out.stdout.count("追加 0 / 更新 0") == 4 and out.stdout.count("埋め込み 0 ") == 4
    assert "日報の基準日: 2025-12-11" in out.stdout
    # Every closing hint runs and finds something (search hints carry --now 2025-12-11 here).
    hints = demo_hints(date(2025, 12, 11), home=home)
    for hint in hints:
        assert hint.command in out.stdout, hint.command
        result = runner.invoke(app, list(hint.args))
        assert result.exit_code == 0, (hint.command, result.output)
        assert "該当する結果がありません" not in result.stdout, hint.command
        assert "指定期間の日報がありません" not in result.stdout, hint.command
