"""Bytes per chunk of a real collection, and what they make on a Qdrant server.

Reads a collection through the storage protocols (``RecordStore.dump``: every record with its
stored vectors), measures what one chunk costs — dense vector, BM25 sparse vector (non-zero
terms), text and metadata payload, sentence units and their bigram vectors — and the embedded
store's bytes on disk, then derives the memory and disk a Qdrant server needs for 1M and 10M
such chunks under the two layouts of ``docs/deployment.md`` (everything in RAM; int8-quantised
vectors in RAM with originals and payloads on disk).

    python bench/bytes_per_chunk.py --home .tansaku-bench --collection eval-jsquad-ir
    python bench/bytes_per_chunk.py --home .tansaku-bench-demo --collection reports --json

The server figures are estimates from measured per-chunk sizes and Qdrant's documented rules of
thumb (``vectors × dim × 4 B × 1.5`` for vectors with their HNSW graph in RAM; a sparse inverted
index of about 2 × 8 B per non-zero term); they are what to provision, not a measurement of a
server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
from pathlib import Path
from typing import Any

HNSW_FACTOR = 1.5  # Qdrant's sizing rule: vectors plus graph and overhead
SPARSE_BYTES_PER_TERM = 16  # u32 index + f32 value, in the point and in the inverted index
UNIT_PAYLOAD_BYTES = 160  # tenant, rid, doc_id, field, unit number, date_int: measured JSON
HNSW_LINKS_BYTES = 2 * 16 * 4  # m = 16 links per point on layer 0, 4 B each


def _dir_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += (Path(root) / name).stat().st_blocks * 512
    return total


def measure(home: Path, collection: str) -> dict[str, Any]:
    import tansaku
    from tansaku.text.ngram import bigrams, unit_texts

    with tansaku.connect(home, create=False) as ts:
        col = ts.collection(collection)
        dim = col.state.dim or 384
        nnz: list[int] = []
        text_bytes: list[int] = []
        meta_bytes: list[int] = []
        units: list[int] = []
        unit_nnz: list[int] = []
        for _tenant, points in col.store.dump(batch=512):
            for p in points:
                rec = p.record
                nnz.append(len(p.sparse))
                text_bytes.append(len(rec.text.encode("utf-8")))
                meta_bytes.append(
                    len(json.dumps(rec.metadata, ensure_ascii=False, default=str).encode())
                )
                texts = unit_texts(rec.text, rec.metadata)
                units.append(len(texts))
                unit_nnz.extend(len(set(bigrams(t))) for t in texts)
        gen = col.gen
        disk = {
            "records": _dir_bytes(gen / "shard") if gen else 0,
            "units": _dir_bytes(gen / "units") if gen else 0,
        }
    n = len(nnz)
    if n == 0:
        raise SystemExit(f"{collection}: no records")
    per_chunk = {
        "dense_bytes": dim * 4,
        "bm25_terms_mean": statistics.fmean(nnz),
        "text_bytes_mean": statistics.fmean(text_bytes),
        "meta_bytes_mean": statistics.fmean(meta_bytes),
        "units_mean": statistics.fmean(units),
        "unit_bigrams_mean": statistics.fmean(unit_nnz) if unit_nnz else 0.0,
    }
    return {
        "collection": collection,
        "records": n,
        "dim": dim,
        "per_chunk": per_chunk,
        "embedded_disk_bytes_per_chunk": {k: v / n for k, v in disk.items()},
        "server": {str(size): server_estimate(per_chunk, dim, size) for size in (10**6, 10**7)},
    }


def server_estimate(pc: dict[str, float], dim: int, chunks: int) -> dict[str, float]:
    """GiB a Qdrant deployment needs for ``chunks`` such chunks (one copy; multiply by the
    replication factor for the cluster, divide by the nodes for one node)."""
    gib = 1024**3
    sparse = pc["bm25_terms_mean"] * SPARSE_BYTES_PER_TERM
    payload = pc["text_bytes_mean"] + pc["meta_bytes_mean"] + 200  # + ids, field, hash, tenant
    unit_points = pc["units_mean"]
    units = unit_points * (pc["unit_bigrams_mean"] * SPARSE_BYTES_PER_TERM + UNIT_PAYLOAD_BYTES)
    dense_ram = dim * 4 * HNSW_FACTOR
    dense_q = dim * 1 * HNSW_FACTOR + HNSW_LINKS_BYTES
    return {
        "all_in_ram_gib": chunks * (dense_ram + sparse + payload + units) / gib,
        "quantized_ram_gib": chunks * (dense_q + sparse + units) / gib,
        "quantized_disk_gib": chunks * (dim * 4 + payload) / gib,
        "unit_points_millions": chunks * unit_points / 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.home, args.collection)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    pc = out["per_chunk"]
    print(f"{out['collection']}: {out['records']} records, dim {out['dim']}")
    for key, value in pc.items():
        print(f"  {key:22s} {value:10.1f}")
    for key, value in out["embedded_disk_bytes_per_chunk"].items():
        print(f"  embedded disk {key:8s} {value:10.0f} B/chunk")
    for size, est in out["server"].items():
        print(f"  {int(size):>10,} chunks: " + ", ".join(f"{k} {v:.1f}" for k, v in est.items()))


if __name__ == "__main__":
    main()
