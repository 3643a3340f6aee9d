"""Every ``curl`` example of ``docs/server.md`` runs as written against a real server over the
demo workspace (keyless, loopback): the real ``curl`` binary, the page's commands verbatim but
for the port and the ids the page elides (``…``, ``3f2a…``, ``42``), the files it uploads
created beside it. Each answers 2xx — but the two the page says refuse (Q/A generation without a
model: 409; cancelling a finished job: 409) — and none is a 400, as raw Japanese in a URL was."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

import tansaku
from tansaku.demo.build import build_demo
from tansaku.demo.tables import install_demo_tables
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO

from .support import DictKeys, Live, live_server

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("curl") is None, reason="the examples need curl"),
]
DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
#: (a pattern of the command, the statuses the page says it answers) where that is not 2xx
REFUSED = ((r"/api/qa/generate", {409}), (r"/cancel\b", {200, 409}))


def _incomplete(command: str) -> bool:
    if command.rstrip().endswith("\\"):
        return True
    try:
        shlex.split(command, comments=True)
    except ValueError:  # an open quote: the command goes on
        return True
    return False


def curl_examples(text: str) -> list[str]:
    """The ``curl`` commands of the page's bash blocks, continuation lines included."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].startswith("curl "):
                command = lines[i]
                while _incomplete(command):
                    i += 1
                    command += "\n" + lines[i]
                commands.append(command)
            i += 1
    return commands


def _files(folder: Path) -> None:
    (folder / "手順.md").write_text("# 閉店の手順\n\nレジを締め、金庫に入れます。\n", "utf-8")
    (folder / "表.csv").write_text("番号,名前,説明\nA1,釣り銭,毎朝数える\n", "utf-8")
    (folder / "イベント一覧.csv").write_text(
        "番号,イベント名,説明,カテゴリ,開始日,終了日,会場,料金\n"
        "EVT-001,芝浦運河オータムフェス,運河沿いに屋台が並びます。,festival,"
        "2025-10-04,2025-10-05,芝浦運河,無料\n",
        "utf-8",
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Live]:
    home = tmp_path_factory.mktemp("docs-curl") / "ws"
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    build_demo(client, now=NOW)
    install_demo_tables(home, now=NOW)
    app = create_app(client, settings=ServerSettings(), keys=DictKeys({}), warm_up=False)
    try:
        with live_server(app) as server:
            yield server
    finally:
        client.close()


def _job(http: httpx.Client, folder: Path) -> str:
    with (folder / "手順.md").open("rb") as fh:
        r = http.post("/api/ingest", data={"collection": "manuals"}, files={"files": fh})
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    deadline = time.monotonic() + 300
    while http.get(f"/api/jobs/{job_id}").json()["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.2)
    return str(job_id)


def _ids(live: Live, folder: Path) -> dict[str, str]:
    """Real ids for the ones the page elides."""
    with httpx.Client(base_url=live.base_url, timeout=120) as http:
        search = {"query": "冷蔵庫", "collection": "manuals"}
        query_id = http.post("/api/search", json=search).json()["query_id"]
        asked = http.post("/api/ask", json={"question": "冷蔵庫の温度は?"}).json()
        job_id = _job(http, folder)
    question = live.state.appdb.unanswered.add(
        "default", collection="manuals", question="金庫の番号は?", reason="記録がない"
    )
    return {
        "job": job_id,
        "query_id": query_id,
        "conversation_id": asked["conversation_id"],
        "unanswered": str(question.id),
    }


def _runnable(command: str, live: Live, ids: dict[str, str]) -> str:
    command = command.replace("localhost:8000", live.base_url.removeprefix("http://"))
    command = command.replace("3f2a…", ids["job"])
    command = command.replace('"query_id": "…"', f'"query_id": "{ids["query_id"]}"')
    command = command.replace(
        '"conversation_id": "…"', f'"conversation_id": "{ids["conversation_id"]}"'
    )
    command = command.replace("/api/unanswered/42/", f"/api/unanswered/{ids['unanswered']}/")
    assert "…" not in command.split("#")[0], command
    return command


def test_the_page_has_its_examples() -> None:
    examples = curl_examples(DOC.read_text(encoding="utf-8"))
    assert len(examples) >= 25
    assert any("--data-urlencode q=冷蔵庫" in c for c in examples)
    for command in examples:  # no raw Japanese in a URL: the server answers it 400
        for word in shlex.split(command, comments=True):
            if "localhost:8000" in word:
                assert word.replace("…", "").isascii(), command


def test_every_curl_example_runs(demo, tmp_path, monkeypatch) -> None:
    for name in ("TANSAKU_LLM_PROVIDER", "TANSAKU_LLM_MODEL", "TANSAKU_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)  # Q/A generation: the page's 409
    _files(tmp_path)
    ids = _ids(demo, tmp_path)
    wrapper = 'curl() { command curl --max-time 120 -w "\\n%{http_code}" "$@"; }\n'
    results = []
    for example in curl_examples(DOC.read_text(encoding="utf-8")):
        command = _runnable(example, demo, ids)
        done = subprocess.run(
            ["bash", "-c", wrapper + command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, (command, done.stderr)
        body, _, status = done.stdout.rpartition("\n")
        allowed = next((ok for pattern, ok in REFUSED if re.search(pattern, command)), None)
        code = int(status)
        assert (code in allowed) if allowed else 200 <= code < 300, (command, code, body[:300])
        results.append((command, code))
    assert len(results) == len(curl_examples(DOC.read_text(encoding="utf-8")))

    raw = f"{demo.base_url}/api/collections/manuals/records?q=冷蔵庫&limit=10"
    done = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", raw],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.stdout == "400"  # why the page encodes Japanese
