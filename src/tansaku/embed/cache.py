"""Persistent embedding cache: (model name, sha256 of text) -> float32 vector, in SQLite.

Re-ingesting unchanged text never calls the model again. The cache is a plain SQLite file in
the workspace (``cache/embeddings.sqlite``): safe to delete, rebuilt on demand.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from tansaku.embed.base import Embedder
from tansaku.embed.vectors import tag_model

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, kind, text_sha256)
) WITHOUT ROWID;
"""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


ProgressFn = Callable[[int], None]


class CachedEmbedder:
    """Wraps an :class:`Embedder`; looks every text up before embedding it.

    ``embedded`` counts texts that really went through the model (the ingest report's
    ``embedded`` figure). Passages and queries are cached under separate kinds because e5
    embeds them with different prefixes.
    """

    def __init__(self, inner: Embedder, path: str | Path | None) -> None:
        self.inner = inner
        self.embedded = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(p), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            # no fsync per commit (WAL still survives a killed process): a vector lost to a
            # power cut is only embedded again; a new query's commit 0.27 -> 0.03 ms
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _lookup(self, kind: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        if self._db is None or not keys:
            return {}
        found: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        with self._lock:
            for i in range(0, len(uniq), 500):
                chunk = uniq[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT text_sha256, vector FROM embeddings WHERE model=? AND kind=? "
                    f"AND text_sha256 IN ({marks})",
                    (self.name, kind, *chunk),
                ).fetchall()
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _store(self, kind: str, keys: Sequence[str], vectors: np.ndarray) -> None:
        if self._db is None:
            return
        rows = [
            (self.name, kind, k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for k, v in zip(keys, vectors, strict=True)
        ]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)

    def _embed(
        self,
        kind: str,
        texts: Sequence[str],
        fn: Callable[[Sequence[str]], np.ndarray],
        progress: ProgressFn | None,
        batch: int,
    ) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        found = self._lookup(kind, keys)
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in found and k not in missing:
                missing[k] = t
        if progress is not None and len(texts) - len(missing):
            progress(len(texts) - len(missing))
        todo = list(missing.items())
        for i in range(0, len(todo), batch):
            part = todo[i : i + batch]
            vecs = fn([t for _, t in part])
            self._store(kind, [k for k, _ in part], vecs)
            for (k, _), v in zip(part, vecs, strict=True):
                found[k] = v
            with self._lock:  # the bulk pipeline embeds from several threads
                self.embedded += len(part)
            if progress is not None:
                progress(len(part))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def embed_passages(
        self, texts: Sequence[str], *, progress: ProgressFn | None = None, batch: int = 32
    ) -> np.ndarray:
        batch = getattr(self.inner, "call_size", None) or batch  # remote: one parallel round
        return self._embed("passage", texts, self.inner.embed_passages, progress, batch)

    def remember_passages(self, texts: Sequence[str], vectors: Sequence[np.ndarray]) -> None:
        """Keep passage vectors this model already made (stored with records being copied,
        e.g. by a merge) so that embedding those texts again finds them instead of the model."""
        if texts:
            self._store("passage", [text_key(t) for t in texts], np.stack(list(vectors)))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors tagged with the model's name (``tansaku.collection.guard``: a collection
        refuses query vectors of another model)."""
        batch = getattr(self.inner, "call_size", None) or 64
        return tag_model(
            self._embed("query", texts, self.inner.embed_queries, None, batch), self.name
        )
