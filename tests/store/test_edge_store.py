from __future__ import annotations

import pytest

from tansaku.store.edge import EdgeStore
from tansaku.testing.store_contract import DIM, StoreContract, make_points


class TestEdgeStore(StoreContract):
    @pytest.fixture
    def store(self, tmp_path):
        s = EdgeStore(tmp_path / "shard", dim=DIM)
        yield s
        s.close()


def test_reopen_keeps_points(tmp_path):
    s = EdgeStore(tmp_path / "shard", dim=DIM)
    s.upsert("team-a", make_points())
    s.close()
    again = EdgeStore(tmp_path / "shard", dim=DIM)
    try:
        assert again.count("team-a") == 4
        assert again.get("team-a", ["r2:body"])[0].metadata["store"] == "渋谷店"
    finally:
        again.close()
