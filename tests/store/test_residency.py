"""A read-only shard hands back the file pages the engine read while loading it, and still
answers; new shards are written with every structure placed on demand."""

from __future__ import annotations

import json
import mmap
import sys
from pathlib import Path

import pytest

from tansaku.store.edge import EdgeStore
from tansaku.store.residency import mapped_ranges, release_file_pages
from tansaku.testing.store_contract import DIM, make_points

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and madvise")


def _resident_kib(folder: Path) -> int:
    """Resident KiB of this process's mappings of files in ``folder`` (/proc/self/smaps)."""
    prefix, total, inside = str(folder.resolve()) + "/", 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            inside = len(head) == 6 and head[5].startswith(prefix)
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


@linux_only
def test_released_pages_are_read_again_intact(tmp_path: Path) -> None:
    data = bytes(range(256)) * 4096 * 4  # 4 MiB
    path = tmp_path / "pages.bin"
    path.write_bytes(data)
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert m[:] == data  # every page touched
        assert mapped_ranges(tmp_path)
        before = _resident_kib(tmp_path)
        if release_file_pages(tmp_path) == 0:
            pytest.skip("this kernel has no MADV_PAGEOUT")
        assert _resident_kib(tmp_path) < before
        assert m[:] == data
    assert mapped_ranges(tmp_path) == []
    assert release_file_pages(tmp_path) == 0  # nothing mapped: nothing to do


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
        assert _resident_kib(tmp_path / "shard") < 4096
        assert reader.count("チームA") == 4
        assert reader.get("チームA", ["r2:body"])[0].metadata["store"] == "渋谷店"
    finally:
        reader.close()
