"""The Qdrant server backend through the whole ``Tansaku`` API, on qdrant-client's local mode
(``qdrant+local://<tmp>``): registering, writing, committing, views, fingerprints, removal;
the dirty flag of a writer killed mid-write (``kill -9`` of a child process at crash points)
and the next writer's recount; team isolation; the URL and configuration wiring; ``tansaku
serve`` over it. The tests through the ``Tansaku`` API also run against a real server when
``TANSAKU_TEST_QDRANT_URL`` is set (each under a prefix of its own, removed after)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("qdrant_client")

import tansaku
from tansaku.backends import EmbeddedBackend, is_url
from tansaku.backends.qdrant.backend import QdrantBackend
from tansaku.backends.qdrant.registry import entry_id
from tansaku.client import Tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.errors import CollectionNotFound, ConfigError
from tansaku.maintenance.doctor import _bm25_mismatch
from tansaku.records import Record
from tansaku.store.qdrant.settings import QdrantSettings, forget_shared_clients
from tansaku.testing import HashEmbedder

DIM = 32
SERVER_URL = os.environ.get("TANSAKU_TEST_QDRANT_URL")
EVENTS = [
    "冷蔵庫の温度が上がらず、食材の一部を廃棄した",
    "お客様から料理の提供が遅いとのクレームがあった",
    "レジの現金が千円合わなかった",
    "食洗機から水漏れがあり、業者に修理を依頼した",
    "新人スタッフの研修を行い、接客の手順を確認した",
    "雨のため客数が少なく、売上が目標を下回った",
    "異物混入の指摘があり、店長が謝罪して返金した",
    "製氷機が止まり、近くの店舗から氷を借りた",
]
STORES = ["新宿店", "渋谷店", "池袋店", "横浜店"]
CONFIG = CollectionConfig(
    name="nippo",
    axes=(
        Axis(name="bm25", mode=AxisMode.BM25),
        Axis(name="dense", mode=AxisMode.DENSE),
        Axis(name="bigram", mode=AxisMode.BIGRAM),
    ),
)


def reports(n: int, *, prefix: str = "r", variant: int = 0) -> list[Record]:
    out = []
    for i in range(n):
        store = STORES[i % len(STORES)]
        a, b = EVENTS[(i * 3 + variant) % len(EVENTS)], EVENTS[(i * 5 + 1) % len(EVENTS)]
        out.append(
            Record(
                id=f"{prefix}{i}:body",
                doc_id=f"{prefix}{i}",
                field="body",
                text=f"{store}の日報 第{i}号。{a}。{b}。対応を記録し、本部に報告した。",
                metadata={"store": store, "date": date(2026, 4, 1 + i % 28).isoformat()},
            )
        )
    return out


def local_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder for a local-mode store: in memory-backed /dev/shm when there is one (local mode
    commits every point to SQLite: ~10 ms a point on disk, 12x less on tmpfs), else tmp_path."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="tansaku-qdrant-", dir=shm))
        yield folder
        shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path / "qdrant"


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    for folder in local_folder(tmp_path):
        yield f"qdrant+local://{folder}"
        forget_shared_clients()  # the folder is locked by its client: let the next one open it


@pytest.fixture(params=["local", "server"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Local mode, or the real server of ``TANSAKU_TEST_QDRANT_URL`` under a prefix of the
    test's own (``[qdrant] prefix`` in the workspace's ``tansaku.toml``), removed after."""
    if request.param == "local":
        for folder in local_folder(tmp_path):
            yield f"qdrant+local://{folder}"
            forget_shared_clients()
        return
    if not SERVER_URL:
        pytest.skip("TANSAKU_TEST_QDRANT_URL is not set: no Qdrant server to test against")
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    home = Path(os.environ["TANSAKU_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "tansaku.toml").write_text(f'[qdrant]\nprefix = "{prefix}"\n', encoding="utf-8")
    yield SERVER_URL
    api_key = os.environ.get("TANSAKU_QDRANT_API_KEY")
    client = QdrantSettings(url=SERVER_URL, api_key=api_key, prefix=prefix).client()
    for c in client.get_collections().collections:
        if c.name.startswith(prefix):
            client.delete_collection(c.name)
    client.close()


@pytest.fixture
def ts(store_url: str) -> Iterator[Tansaku]:
    with tansaku.connect(store_url, embedder=HashEmbedder(DIM)) as client:
        yield client


def backend(ts: Tansaku) -> QdrantBackend:
    assert isinstance(ts.backend, QdrantBackend)
    return ts.backend


def lengths_agree(ts: Tansaku, name: str) -> bool:
    """What ``tansaku doctor`` checks: the statistics equal the sums over the records."""
    col = ts.collection(name)
    if _bm25_mismatch(col):  # doctor's own check
        return False
    want = col.store.lengths()
    have = {
        team: {f: (st.total_len, st.count) for f, st in fields.items() if st.count}
        for team, fields in col.state.bm25.items()
    }
    return {t: f for t, f in have.items() if f} == want


def test_urls_of_the_qdrant_backend_are_urls() -> None:
    assert is_url("qdrant+local:///var/lib/tansaku/qdrant")
    assert is_url("qdrant+memory://tests") and is_url("qdrant+memory://")
    assert is_url("https://qdrant.example.com:6333")
    assert not is_url("/var/lib/tansaku") and not is_url("qdrant-data")


def test_write_commit_view_and_remove(ts: Tansaku) -> None:
    b = backend(ts)
    assert b.names() == [] and not ts.has_collection("nippo")
    with pytest.raises(CollectionNotFound):
        ts.collection("nippo")
    ts.ingest_records(reports(12), collection="nippo", config=CONFIG)
    assert b.names() == ["nippo"] and b.exists("nippo")
    first = b.fingerprint("nippo")
    entry = b.registry.read("nippo")
    assert entry is not None and entry.version >= 1 and not entry.dirty and entry.teams == ()
    assert entry.config == CONFIG and entry.state.embedder == HashEmbedder(DIM).name
    assert lengths_agree(ts, "nippo")

    old = ts.collection("nippo")
    hits = ts.search("冷蔵庫の温度", collection="nippo").hits
    assert hits and "冷蔵庫" in hits[0].record.text

    ts.ingest_records(reports(12, prefix="s", variant=1), collection="nippo")
    assert b.fingerprint("nippo") != first
    assert b.registry.read("nippo").version > entry.version  # type: ignore[union-attr]
    new = ts.collection("nippo")
    assert new is not old and new.state.bm25["default"]["body"].count == 24
    # a view opened before the commit keeps working (a server has no generations: it reads
    # the records as they are now, with the statistics of its commit)
    assert old.state.bm25["default"]["body"].count == 12
    assert old.store.count("default") == 24
    assert ts.collections()[0].points == 24

    ts.delete_collection("nippo")
    assert b.names() == [] and not b.exists("nippo")
    prefix = b.settings.prefix
    names = [c.name for c in b.client.get_collections().collections if c.name.startswith(prefix)]
    assert names == [f"{prefix}meta"]  # records and units dropped, the registry stays


def test_a_version_per_commit_and_dirty_while_writing(ts: Tansaku) -> None:
    b = backend(ts)
    ts.create_collection(CONFIG)
    v0 = b.registry.read("nippo").version  # type: ignore[union-attr]
    with ts.writing("nippo") as col:
        from tansaku.ingest.pipeline import ingest_records

        ingest_records(col, reports(5), ts.embedder, tenant="team-a")
        during = b.registry.read("nippo")
        assert during is not None and during.dirty and during.teams == ("team-a",)
        assert during.version == v0  # nothing published yet
        assert ts.collection("nippo").state.bm25.get("team-a") is None
    after = b.registry.read("nippo")
    assert after is not None and not after.dirty and after.version == v0 + 1
    assert after.state.bm25["team-a"]["body"].count == 5


def test_a_failed_writer_recounts_at_once(ts: Tansaku) -> None:
    b = backend(ts)
    ts.ingest_records(reports(6), collection="nippo", config=CONFIG)

    class Boom(Exception):
        pass

    from tansaku.ingest.pipeline import ingest_records

    with pytest.raises(Boom), ts.writing("nippo") as col:
        ingest_records(col, reports(4, prefix="x"), ts.embedder, tenant="default")
        col.state.bm25["default"]["body"].count = 999  # what a crash mid-batch can leave
        raise Boom
    entry = b.registry.read("nippo")
    assert entry is not None and not entry.dirty
    assert entry.state.bm25["default"]["body"].count == 10  # the records are on the server
    assert "default" not in entry.state.units  # rebuilt by the next ingest of the team
    assert lengths_agree(ts, "nippo")
    ts.ingest_records(reports(6), collection="nippo")
    assert "default" in b.registry.read("nippo").state.units  # type: ignore[union-attr]


def test_teams_are_isolated_through_the_api(ts: Tansaku) -> None:
    ts.ingest_records(reports(8, prefix="a"), collection="nippo", team="team-a", config=CONFIG)
    secret = Record(
        id="b0:body", doc_id="b0", field="body", text="極秘の新メニュー開発計画について"
    )
    ts.ingest_records([secret], collection="nippo", team="team-b")
    for axes in (None, ("bm25",), ("dense",), ("bigram",)):
        opts = {} if axes is None else {"axes": tuple(a for a in CONFIG.axes if a.name in axes)}
        a_hits = ts.search("極秘の新メニュー", collection="nippo", team="team-a", **opts).hits
        assert all(h.doc_id.startswith("a") for h in a_hits)
        b_hits = ts.search("冷蔵庫の温度", collection="nippo", team="team-b", **opts).hits
        assert all(h.doc_id == "b0" for h in b_hits)
    info = ts.collections()[0]
    assert info.teams == ("team-a", "team-b") and info.points == 9
    ts.delete_collection("nippo", team="team-a")
    col = ts.collection("nippo")
    assert col.store.count("team-a") == 0 and col.store.count("team-b") == 1
    assert "team-a" not in col.state.bm25 and lengths_agree(ts, "nippo")


def test_the_env_or_the_workspace_config_picks_the_server(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "client"
    monkeypatch.setenv("TANSAKU_QDRANT_URL", url)
    with tansaku.connect(home, embedder=HashEmbedder(DIM), create=False) as ts:
        assert isinstance(ts.backend, QdrantBackend) and ts.workspace.home == home.resolve()
        assert home.is_dir()  # only caches and logs live here: created for a server
        ts.ingest_records(reports(3), collection="nippo")
    monkeypatch.delenv("TANSAKU_QDRANT_URL")
    with tansaku.connect(home, embedder=HashEmbedder(DIM)) as ts:
        assert isinstance(ts.backend, EmbeddedBackend) and ts.backend.names() == []
    (home / "tansaku.toml").write_text(
        f'[qdrant]\nurl = "{url}"\nprefix = "tansaku_"\n', encoding="utf-8"
    )
    with tansaku.connect(home, embedder=HashEmbedder(DIM)) as ts:
        assert isinstance(ts.backend, QdrantBackend) and ts.backend.names() == ["nippo"]
    (home / "tansaku.toml").write_text(
        f'[qdrant]\nurl = "{url}"\nprefix = "other_"\n', encoding="utf-8"
    )
    with tansaku.connect(home, embedder=HashEmbedder(DIM)) as ts:
        assert ts.backend.names() == []  # another prefix: another set of collections


def test_a_missing_qdrant_client_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "qdrant_client", None)  # what an uninstalled one raises
    with pytest.raises(ConfigError, match=r"pip install 'tansaku\[qdrant\]'"):
        tansaku.connect(f"qdrant+local://{tmp_path}/q", embedder=HashEmbedder(DIM))


def test_the_root_option_reaches_every_command_and_is_put_back(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from tansaku.cli.main import app

    monkeypatch.delenv("TANSAKU_QDRANT_URL", raising=False)
    ts = tansaku.connect(url, embedder=HashEmbedder(DIM))
    ts.ingest_records(reports(3), collection="nippo")
    ts.close()
    result = CliRunner().invoke(
        app, ["--qdrant-url", url, "collections", "--json", "--home", str(tmp_path / "h")]
    )
    assert result.exit_code == 0, result.output
    assert [c["name"] for c in json.loads(result.stdout)["collections"]] == ["nippo"]
    assert "TANSAKU_QDRANT_URL" not in os.environ


CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import tansaku
    from tansaku.testing import HashEmbedder
    from test_qdrant_backend import CONFIG, reports

    with tansaku.connect({url!r}, embedder=HashEmbedder({dim})) as ts:
        ts.ingest_records(reports(1000, prefix="k"), collection="nippo", config=CONFIG)
    print("finished")
    """
)


@pytest.mark.integration
@pytest.mark.parametrize("crash_at", ["qdrant-dirty:2", "units:3", "records:3", "stats:2"])
def test_a_writer_killed_mid_write_is_recounted_by_the_next(
    store_url: str, tmp_path: Path, crash_at: str
) -> None:
    url = store_url
    with tansaku.connect(url, embedder=HashEmbedder(DIM)) as ts:
        ts.ingest_records(reports(10), collection="nippo", config=CONFIG)
    forget_shared_clients()  # the child opens the folder
    script = CHILD.format(tests=str(Path(__file__).parent), url=url, dim=DIM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSAKU_")}
    env.update(TANSAKU_CRASH_AT=crash_at, TANSAKU_CHECKPOINT_S="0", PYTHONUTF8="1")
    env["TANSAKU_HOME"] = str(tmp_path / "child-home")
    settings = Path(os.environ["TANSAKU_HOME"]) / "tansaku.toml"
    if settings.is_file():  # the server variant's prefix
        (tmp_path / "child-home").mkdir(exist_ok=True)
        shutil.copy(settings, tmp_path / "child-home" / "tansaku.toml")
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == -9, proc.stderr[-2000:]

    with tansaku.connect(url, embedder=HashEmbedder(DIM)) as ts:
        b = backend(ts)
        entry = b.registry.read("nippo")
        assert entry is not None and entry.dirty and entry.teams == ("default",)
        stored = ts.collection("nippo").store.count("default")
        assert 10 < stored < 1010  # some batches of the child are stored, not all
        with ts.writing("nippo", lazy=True):  # the next writer repairs before anything
            pass
        entry = b.registry.read("nippo")
        assert entry is not None and not entry.dirty
        assert entry.state.bm25["default"]["body"].count == stored
        assert lengths_agree(ts, "nippo")
        assert "default" not in entry.state.units  # its units may be incomplete
        col = ts.collection("nippo")
        counts = col.units.unit_counts(from_shard=False)
        assert counts == col.units.unit_counts(from_shard=True)

        report = ts.ingest_records(reports(1000, prefix="k"), collection="nippo")
        assert not report.failed
        col = ts.collection("nippo")
        assert col.store.count("default") == 1010 and lengths_agree(ts, "nippo")
        assert col.has_units("default")
        hits = ts.search("製氷機が止まり", collection="nippo", axes=(CONFIG.axes[2],)).hits
        assert hits and "製氷機" in hits[0].record.text


def test_registry_ids_are_stable() -> None:
    assert entry_id("nippo") == entry_id("nippo") != entry_id("nippo2")
    assert 0 <= entry_id("nippo") < 2**64


@pytest.mark.integration
def test_the_server_serves_the_collections_of_the_configured_qdrant(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``create_app(folder)`` — what ``tansaku serve`` runs — opens the Qdrant backend named
    by the folder's ``tansaku.toml`` and searches it (query vectors from the fake server)."""
    from fastapi.testclient import TestClient

    from tansaku.embed import load_embedder
    from tansaku.server import ServerSettings, create_app
    from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

    for name in ("TANSAKU_EMBEDDER", "TANSAKU_EMBED_BASE_URL", "TANSAKU_EMBED_MODEL"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "ws"
    home.mkdir()
    with FakeEmbeddingServer(dim=48) as srv:
        (home / "tansaku.toml").write_text(
            f'[embedder]\nprovider = "tei"\nbase_url = "{srv.url}/v1"\nmodel = "fake-e5"\n\n'
            f'[qdrant]\nurl = "{url}"\n',
            encoding="utf-8",
        )
        with tansaku.connect(home, embedder=load_embedder(home)) as ts:
            assert isinstance(ts.backend, QdrantBackend)
            ts.ingest_records(reports(8), collection="nippo", config=CONFIG)
        assert not any((home / "collections").iterdir())
        # keyless: TestClient's Host (testserver) is allowed as an operator would allow a name
        settings = ServerSettings(allowed_hosts=("testserver",))
        app = create_app(home, settings=settings, warm_up=False, ui=False)
        with TestClient(app) as http:
            health = http.get("/healthz").json()
            assert health["checks"]["engine"] == {"ok": True, "collections": 1}, health
            listed = http.get("/api/collections")
            assert listed.status_code == 200, listed.text
            assert "nippo" in listed.text
            r = http.post("/api/search", json={"query": "製氷機が止まった", "collection": "nippo"})
            assert r.status_code == 200, r.text
            assert "製氷機" in r.json()["hits"][0]["text"]


def test_a_local_folder_another_process_holds_is_a_clear_error(url: str) -> None:
    from tansaku.errors import StorageError

    folder = url.removeprefix("qdrant+local://")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom qdrant_client import QdrantClient\n"
            f"c = QdrantClient(path={folder!r})\nprint('ready', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        with pytest.raises(StorageError, match="別のプロセスが使用中"):
            tansaku.connect(url, embedder=HashEmbedder(DIM))
    finally:
        holder.communicate("", timeout=60)
