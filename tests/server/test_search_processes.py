"""``tansaku serve --search-processes N``: every search of the server runs in one of N child
processes (``tansaku.server.search_processes``), so searches use every core. A real server
over a copy of the two teams' workspace (the hash embedder, configured in its
``tansaku.toml`` so that the children open it as the server does), searched over HTTP and
compared with the same search through the library in this process; a child killed with
``SIGKILL`` in the middle of searches; an ingest by another process while the server runs;
the children gone when the server stops."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import tansaku
from tansaku.appdb.db import open_appdb
from tansaku.embed import load_embedder
from tansaku.errors import CollectionNotFound, ConfigError
from tansaku.server.search_processes import SearchProcesses, SearchProcessesFailed, process_count

from .support import free_port, records, serve_process

pytestmark = pytest.mark.integration

QUESTIONS = ["冷蔵庫の温度", "開店準備の手順", "アレルギー対応", "釣り銭の確認", "霜取りはいつ"]


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        out += [int(c) for c in task.read_text().split()]
    return sorted(out)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class Served:
    def __init__(self, home: Path, proc: subprocess.Popen[str], base: str, keys: dict[str, str]):
        self.home, self.proc, self.base, self.keys = home, proc, base, keys

    def http(self, team: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {self.keys[team]}"}
        return httpx.Client(base_url=self.base, timeout=60, headers=auth)

    def searchers(self) -> list[int]:
        """The search processes (the server's children running the search module)."""
        return [
            pid
            for pid in _children(self.proc.pid)
            if b"tansaku.server.search_processes" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]


@pytest.fixture
def served(template_workspace, tmp_path) -> Iterator[Served]:
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    (home / "tansaku.toml").write_text('[embedder]\nprovider = "hash"\ndim = 32\n', "utf-8")
    db = open_appdb(home)
    keys = {team: db.keys.create_key(team)[0] for team in ("alpha", "beta")}
    db.close()
    port = free_port()
    env = {"TANSAKU_EVENT_FLUSH_S": "0", "TANSAKU_JOB_PROCESSES": "0"}
    proc = serve_process(home, port, "--search-processes", "2", env=env)
    base = f"http://127.0.0.1:{port}"
    server = Served(home, proc, base, keys)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "tansaku serve did not start"
            try:
                auth = {"Authorization": f"Bearer {keys['alpha']}"}
                health = httpx.get(f"{base}/healthz", timeout=2, headers=auth).json()
                if health["checks"]["model"]["loaded"]:
                    break
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.1)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)


def _library(home: Path, question: str, team: str) -> list[tuple[str, float]]:
    with tansaku.connect(home, embedder=load_embedder(home), create=False) as ts:
        result = ts.search(question, collection="manuals", team=team, top_k=5)
    return [(h.record.id, round(h.score, 5)) for h in result.hits]


def test_searches_answer_as_the_library_does_with_events_and_teams(served):
    assert len(served.searchers()) == 2
    with served.http("alpha") as alpha:
        assert alpha.get("/healthz").json()["checks"]["model"]["search_processes"] == 2
    with served.http("alpha") as alpha, served.http("beta") as beta:
        for question in QUESTIONS:
            for team, http in (("alpha", alpha), ("beta", beta)):
                r = http.post("/api/search", json={"query": question, "collection": "manuals"})
                assert r.status_code == 200, r.text
                got = [(h["id"], round(h["score"], 5)) for h in r.json()["hits"][:5]]
                assert got == _library(served.home, question, team)
                ids = {h["doc_id"] for h in r.json()["hits"]}
                assert ("beta-fridge" in ids) <= (team == "beta")  # each team its own records
        # the event row is the server's: feedback finds the search by its query_id
        r = alpha.post("/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"})
        query_id = r.json()["query_id"]
        fb = alpha.post("/api/feedback", json={"query_id": query_id, "rating": -1})
        assert fb.status_code == 201, fb.text
        assert fb.json()["meta"]["query"] == "冷蔵庫の温度"
        # the agent's searches go the same way
        body = {"question": "冷蔵庫の温度は何度までですか", "collections": {"manuals": "manuals"}}
        ask = alpha.post("/api/ask", json=body)
        assert ask.status_code == 200, ask.text
        assert "冷蔵庫" in ask.json()["answer"], ask.json()
        # another team's collection
        secret = alpha.post("/api/search", json={"query": "金庫", "collection": "secret"})
        assert secret.status_code == 404


def test_a_killed_search_process_is_replaced_and_no_search_fails(served):
    before = served.searchers()
    statuses: list[int] = []
    stop = threading.Event()

    def load() -> None:
        with served.http("alpha") as http:
            i = 0
            while not stop.is_set():
                body = {"query": f"{QUESTIONS[i % len(QUESTIONS)]} {i}", "collection": "manuals"}
                statuses.append(http.post("/api/search", json=body).status_code)
                i += 1

    threads = [threading.Thread(target=load) for _ in range(6)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    os.kill(before[0], signal.SIGKILL)
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join()
    assert statuses and set(statuses) == {200}, sorted(set(statuses))
    deadline = time.monotonic() + 60
    while len(after := served.searchers()) < 2 or before[0] in after:
        assert time.monotonic() < deadline, after
        time.sleep(0.2)
    assert before[1] in after
    # both of the killed child's searches found it gone: one replacement, not two
    time.sleep(1.0)
    assert len(served.searchers()) == 2, served.searchers()


def test_a_commit_by_another_process_reaches_the_next_search(served):
    with served.http("alpha") as http:
        body = {"query": "ガス漏れ警報器の点検", "collection": "manuals"}
        first = http.post("/api/search", json=body).json()["hits"]
        assert "gas-alarm" not in {h["doc_id"] for h in first}
        row = [("gas-alarm", "ガス漏れ警報器", "ガス漏れ警報器の点検は毎月一日に店長が行います。")]
        with tansaku.connect(served.home, embedder=load_embedder(served.home)) as ts:
            ts.ingest_records(records(row), collection="manuals", team="alpha")
        for _ in range(4):  # whichever child answers
            hits = http.post("/api/search", json=body).json()["hits"]
            assert hits[0]["doc_id"] == "gas-alarm"
        # a collection made after the children started
        with tansaku.connect(served.home, embedder=load_embedder(served.home)) as ts:
            ts.ingest_records(records(row), collection="safety", team="alpha")
        r = http.post("/api/search", json={"query": "ガス漏れ", "collection": "safety"})
        assert r.status_code == 200, r.text
        assert r.json()["hits"][0]["doc_id"] == "gas-alarm"
        # deleted and made again under the same name: the children read the new one
        again = [("gas-valve", "ガス栓", "ガス漏れに気づいたらガス栓を閉めて窓を開けます。")]
        with tansaku.connect(served.home, embedder=load_embedder(served.home)) as ts:
            ts.delete_collection("safety")
            ts.ingest_records(records(again), collection="safety", team="alpha")
        for _ in range(4):
            r = http.post("/api/search", json={"query": "ガス漏れ", "collection": "safety"})
            assert [h["doc_id"] for h in r.json()["hits"]] == ["gas-valve"], r.text


def test_stopping_the_server_ends_its_search_processes(served):
    children = served.searchers()
    assert len(children) == 2
    served.proc.send_signal(signal.SIGTERM)
    out, _ = served.proc.communicate(timeout=60)
    assert served.proc.returncode in (0, -signal.SIGTERM), out  # uvicorn re-raises the signal
    assert "Application shutdown complete" in out
    assert "検索プロセス 2 個で検索します" in out
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in children):
        assert time.monotonic() < deadline, [p for p in children if _alive(p)]
        time.sleep(0.1)


def test_an_error_of_the_search_comes_back_as_itself(template_workspace, tmp_path):
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    (home / "tansaku.toml").write_text('[embedder]\nprovider = "hash"\ndim = 32\n', "utf-8")
    searchers = SearchProcesses(home, 1)
    try:
        assert searchers.start() is True
        with pytest.raises(CollectionNotFound):
            searchers.run(tansaku.SearchRequest(query="冷蔵庫", collection="nosuch"))
        found = searchers.run(
            tansaku.SearchRequest(query="冷蔵庫", collection="manuals", tenant="alpha")
        )
        assert found.hits and found.versions["index_version"]
    finally:
        searchers.close()


def test_one_search_process_answers_searches_side_by_side(template_workspace, tmp_path):
    """A child answers two searches at once (a socket and a thread each): eight threads
    searching through one child get the library's hits, and a child killed while both of its
    searches are out is replaced once."""
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    (home / "tansaku.toml").write_text('[embedder]\nprovider = "hash"\ndim = 32\n', "utf-8")
    expected = {q: _library(home, q, "alpha") for q in QUESTIONS}
    searchers = SearchProcesses(home, 1)
    got: list[tuple[str, list[tuple[str, float]]]] = []
    failures: list[BaseException] = []
    under_way = threading.Event()

    def search(n: int) -> None:
        for i in range(10):
            question = QUESTIONS[(n + i) % len(QUESTIONS)]
            request = tansaku.SearchRequest(
                query=question, collection="manuals", tenant="alpha", top_k=5
            )
            try:
                found = searchers.run(request)
            except BaseException as exc:  # reported below
                failures.append(exc)
                return
            got.append((question, [(h.record.id, round(h.score, 5)) for h in found.hits]))
            if len(got) >= 10:
                under_way.set()

    try:
        assert searchers.start() is True
        (child,) = list(searchers._children)
        assert len(child.conns) == 2
        threads = [threading.Thread(target=search, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        assert under_way.wait(60)
        child.process.kill()  # eight threads searching: both of its sockets busy
        for t in threads:
            t.join()
        assert not failures, failures
        assert len(got) == 80
        assert all(hits == expected[q] for q, hits in got)
        deadline = time.monotonic() + 60
        while searchers.ready < 1:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(1.0)
        assert searchers.ready == 1
        (replacement,) = list(searchers._children)
        assert replacement is not child
    finally:
        searchers.close()


def _refuses_a_search(searchers: SearchProcesses) -> None:
    with pytest.raises(SearchProcessesFailed, match="検索プロセスを起動できません"):
        searchers.run(tansaku.SearchRequest(query="冷蔵庫", collection="manuals", tenant="alpha"))


def test_search_processes_that_cannot_open_the_workspace_say_why(tmp_path):
    searchers = SearchProcesses(tmp_path / "missing", 1)
    try:
        assert searchers.start() is False
        assert "WorkspaceNotFound" in (searchers.error or "")
        _refuses_a_search(searchers)
    finally:
        searchers.close()


def test_search_processes_that_cannot_be_made_say_why(template_workspace, monkeypatch):
    """The interpreter gone from under a running server (an upgrade): no child can be made,
    the reason is kept and a search is refused at once instead of waiting for a child."""
    monkeypatch.setattr(sys, "executable", "/nonexistent/python3")
    searchers = SearchProcesses(template_workspace, 1)
    try:
        assert searchers.start() is False
        assert "FileNotFoundError" in (searchers.error or "")
        _refuses_a_search(searchers)
    finally:
        searchers.close()


def test_the_process_count_comes_from_the_setting_or_the_environment(monkeypatch):
    monkeypatch.delenv("TANSAKU_SEARCH_PROCESSES", raising=False)
    assert process_count() == 0
    assert process_count(3) == 3
    monkeypatch.setenv("TANSAKU_SEARCH_PROCESSES", "2")
    assert process_count() == 2
    assert process_count(0) == 0
    monkeypatch.setenv("TANSAKU_SEARCH_PROCESSES", "二つ")
    with pytest.raises(ConfigError, match="TANSAKU_SEARCH_PROCESSES"):
        process_count()


def test_serve_refuses_a_bad_process_count_by_name(tmp_path):
    env = dict(os.environ, TANSAKU_SEARCH_PROCESSES="many")
    cmd = [sys.executable, "-m", "tansaku.cli.main", "serve", "--home", str(tmp_path / "ws")]
    done = subprocess.run(
        [*cmd, "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "TANSAKU_SEARCH_PROCESSES" in done.stderr
    assert "Traceback" not in done.stderr
