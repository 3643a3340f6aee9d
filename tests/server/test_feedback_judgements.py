"""👎 with 「正しい結果はこれ」: ``correct_doc_id`` on ``POST /api/feedback`` is checked against
the collections the search covered and the team's documents, kept in the feedback's meta, and
``tansaku feedback judgements`` turns those into a judgement file ``tansaku tune`` reads — over
a real uvicorn server and the command line."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from tansaku.cli.main import app
from tansaku.eval import load_dataset

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration


def test_a_chosen_correct_result_becomes_a_judgement(fresh, tmp_path):
    with fresh.client(KEY_ALPHA) as http:
        qid = http.post(
            "/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"}
        ).json()["query_id"]
        r = http.post(
            "/api/feedback",
            json={"query_id": qid, "rating": -1, "correct_doc_id": "allergy"},
        )
        assert r.status_code == 201, r.text
        assert r.json()["meta"]["correct"] == {"collection": "manuals", "doc_id": "allergy"}
        missing = http.post(
            "/api/feedback", json={"query_id": qid, "rating": -1, "correct_doc_id": "nosuch"}
        )
        elsewhere = http.post(
            "/api/feedback",
            json={
                "query_id": qid,
                "rating": -1,
                "correct_doc_id": "allergy",
                "correct_collection": "reports",
            },
        )
    assert missing.status_code == 400 and "nosuch" in missing.text
    assert elsewhere.status_code == 400 and "対象ではありません" in elsewhere.text
    with fresh.client(KEY_BETA) as http:  # another team cannot rate alpha's search
        other = http.post(
            "/api/feedback", json={"query_id": qid, "rating": -1, "correct_doc_id": "allergy"}
        )
    assert other.status_code == 404
    out = tmp_path / "judgements.yaml"
    home = str(fresh.state.client.workspace.home)
    res = CliRunner().invoke(
        app, ["feedback", "judgements", "--team", "alpha", "--home", home, "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert data["collection"] == "manuals"
    assert data["queries"] == [
        {"query": "冷蔵庫の温度", "relevant": ["allergy"], "note": data["queries"][0]["note"]}
    ]
    assert load_dataset(out).qrels  # the eval/tune format
    none = CliRunner().invoke(app, ["feedback", "judgements", "--team", "beta", "--home", home])
    assert none.exit_code != 0 and "まだありません" in none.stderr
