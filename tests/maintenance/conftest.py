"""Shared pieces of the maintenance tests: the fake embedding server (real HTTP on 127.0.0.1),
records with real Japanese text, and ``tansaku`` run in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tansaku.records import Record
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

API_KEY = "sk-maintenance-test-0123456789"

REPORTS = [
    "冷蔵庫の温度が上がらず、食材を廃棄した。",
    "冷蔵庫の温度が下がらないので業者を呼んだ。",
    "お客様から提供が遅いとのクレームがあった。",
    "レジの現金が千円合わなかった。",
    "食洗機から水漏れがあり、業者に修理を依頼した。",
    "駐車場の案内看板が倒れていた。",
    "ランチの唐揚げ定食が売り切れた。",
    "新人スタッフの研修を実施した。",
    "トイレの紙が切れていたとの指摘があった。",
    "店内のBGMが大きすぎるとの声があった。",
]


def records(texts: list[str] = REPORTS, prefix: str = "r") -> list[Record]:
    return [
        Record(id=f"{prefix}{i}#0", doc_id=f"{prefix}{i}", field="body", text=t)
        for i, t in enumerate(texts)
    ]


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=32, api_key=API_KEY, max_batch=None) as srv:
        yield srv


def model_env(server: FakeEmbeddingServer, model: str, dims: int) -> dict[str, str]:
    """The environment of a process whose workspace embeds with ``model`` on the fake server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSAKU_")}
    env.update(
        PYTHONUTF8="1",
        TANSAKU_EMBEDDER="tei",
        TANSAKU_EMBED_BASE_URL=f"{server.url}/v1",
        TANSAKU_EMBED_MODEL=model,
        TANSAKU_EMBED_DIMENSIONS=str(dims),
        TANSAKU_EMBED_API_KEY=API_KEY,
        TANSAKU_EMBED_BATCH_SIZE="4",
        TANSAKU_EMBED_CONCURRENCY="1",
    )
    return env


def run_cli(
    home: Path, env: dict[str, str], *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``tansaku ARGS --home HOME`` in a fresh process."""
    cmd = [sys.executable, "-m", "tansaku.cli.main", *args, "--home", str(home)]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False
    )
