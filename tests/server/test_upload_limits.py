"""An upload with a real 3-row × 10,000-column CSV and a real zip-bomb Word file beside a good
file: the job finishes, each refused file is listed with a Japanese reason naming it and the
limit, and the good file is searchable."""

from __future__ import annotations

import io
import time
import zipfile

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def wide_csv(columns: int = 10_000, rows: int = 3) -> bytes:
    header = ",".join(f"列{i}" for i in range(columns))
    lines = [header] + [",".join(f"値{r}-{i}" for i in range(columns)) for r in range(rows)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def zip_bomb_docx() -> bytes:
    """A real Word file (python-docx) with a 64 MB member of zeros stored in ~64 KB."""
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph("冷蔵庫の温度は毎朝確認します。")
    plain = io.BytesIO()
    document.save(plain)
    out = io.BytesIO()
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item))
        dst.writestr("word/media/bomb.bin", bytes(64 * 1024 * 1024))
    return out.getvalue()


def test_refused_files_are_named_with_their_limit_and_the_rest_is_kept(fresh):
    files = [
        ("files", ("横に長い表.csv", wide_csv(), "text/csv")),
        ("files", ("圧縮爆弾.docx", zip_bomb_docx(), DOCX)),
        ("files", ("メモ.txt", "閉店後は冷凍庫の扉を確認する。".encode(), "text/plain")),
    ]
    with fresh.client(KEY_ALPHA) as http:
        r = http.post("/api/ingest", data={"collection": "manuals"}, files=files)
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 180
        while (job := http.get(f"/api/jobs/{r.json()['id']}").json())["status"] not in (
            "done",
            "failed",
        ):
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        assert job["status"] == "done", job
        failed = {f["path"]: f["reason"] for f in job["failures"]}
        assert set(failed) == {"横に長い表.csv", "圧縮爆弾.docx"}
        assert "「横に長い表.csv」の列数(10,000)が上限(200 列)" in failed["横に長い表.csv"]
        assert "「圧縮爆弾.docx」の部品" in failed["圧縮爆弾.docx"]
        assert "上限(200 倍)" in failed["圧縮爆弾.docx"]
        hits = http.post(
            "/api/search", json={"query": "冷凍庫の扉", "collection": "manuals"}
        ).json()["hits"]
        assert hits[0]["doc_id"] == "メモ"
