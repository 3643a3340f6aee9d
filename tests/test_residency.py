"""A read-only shard hands back the file pages the engine read while loading it, and still
answers; new shards are written with every structure placed on demand."""

from __future__ import annotations

import ctypes
import json
import mmap
import sys
from pathlib import Path

import pytest

from tansaku.residency import mapped_ranges, release_file_pages, resident_kib
from tansaku.store.edge import EdgeStore
from tansaku.testing.store_contract import DIM, make_points

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and madvise")


def _cached_pages(m: mmap.mmap, addr: int | None = None) -> int:
    """Pages of the file behind ``m`` in the kernel's page cache (``mincore``); ``addr``: the
    mapping's start when ``m`` cannot be written (ctypes needs a writable buffer to find it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    pages = (len(m) + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vec = ctypes.create_string_buffer(pages)
    if addr is None:
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert libc.mincore(addr, len(m), vec) == 0
    return sum(b & 1 for b in vec.raw)


@linux_only
def test_released_pages_stay_in_the_page_cache_and_read_again_intact(tmp_path: Path) -> None:
    data = bytes(range(256)) * 4096 * 4  # 4 MiB
    path = tmp_path / "pages.bin"
    path.write_bytes(data)
    with path.open("r+b") as f, mmap.mmap(f.fileno(), 0) as m:  # shared, as the engine maps
        assert m[:] == data  # every page touched
        assert [(r.shared, r.writable) for r in mapped_ranges(tmp_path)] == [(True, True)]
        before = resident_kib(tmp_path)
        assert release_file_pages(tmp_path) == 1
        assert resident_kib(tmp_path) < before // 4
        assert _cached_pages(m) == len(data) // mmap.PAGESIZE  # no disk read to map them again
        assert m[:] == data
        m[:4] = b"\xff\xfe\xfd\xfc"  # a dirty page handed back keeps its bytes
        assert release_file_pages(tmp_path) == 1
        assert m[:8] == b"\xff\xfe\xfd\xfc" + data[4:8]
    assert path.read_bytes() == b"\xff\xfe\xfd\xfc" + data[4:]
    assert mapped_ranges(tmp_path) == []
    assert release_file_pages(tmp_path) == 0  # nothing mapped: nothing to do


@linux_only
def test_a_read_only_private_mapping_keeps_its_pages_cached_and_its_bytes(tmp_path: Path) -> None:
    """Sudachi maps its dictionary private and read-only: the pages handed back stay in the
    page cache (no disk read to map them again) and read back the same."""
    data = bytes(range(251)) * 4096 * 4  # ~4 MiB, not a multiple of the page size
    path = tmp_path / "system.dic"
    path.write_bytes(data)
    with path.open("rb") as f:
        m = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
        try:
            assert m[:] == data
            (mapping,) = mapped_ranges(tmp_path)
            assert (mapping.shared, mapping.writable) == (False, False)
            before = resident_kib(tmp_path)
            assert release_file_pages(tmp_path) == 1
            assert resident_kib(tmp_path) < before // 4
            pages = (len(data) + mmap.PAGESIZE - 1) // mmap.PAGESIZE
            assert _cached_pages(m, mapping.start) == pages  # no disk read to map them again
            assert m[:] == data
        finally:
            m.close()


@linux_only
def test_a_read_only_shard_answers_after_handing_back_its_pages(tmp_path: Path) -> None:
    writer = EdgeStore(tmp_path / "shard", dim=DIM)
    writer.upsert("チームA", make_points())
    writer.close()
    config = json.loads((tmp_path / "shard" / "edge_config.json").read_text())
    assert config["payload_memory"] == "cold"
    assert config["vectors"]["dense"]["memory"] == "cold"
    reader = EdgeStore(tmp_path / "shard", dim=DIM, read_only=True)
    try:
        # the engine read whole preallocated payload-index pages while loading; they are back
        assert resident_kib(tmp_path / "shard") < 4096
        assert reader.count("チームA") == 4
        assert reader.get("チームA", ["r2:body"])[0].metadata["store"] == "渋谷店"
    finally:
        reader.close()
