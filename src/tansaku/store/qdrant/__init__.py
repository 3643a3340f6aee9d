"""The Qdrant server backend's stores: records and sentence units in Qdrant collections reached
through ``qdrant-client`` (a server, or its local mode in tests).

``settings`` is importable without the ``qdrant`` extra; the stores need it and are imported
on first use (``from tansaku.store.qdrant import QdrantRecordStore``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tansaku.store.qdrant.settings import QdrantSettings

if TYPE_CHECKING:
    from tansaku.store.qdrant.records import QdrantRecordStore
    from tansaku.store.qdrant.units import QdrantUnitIndex

__all__ = ["QdrantRecordStore", "QdrantSettings", "QdrantUnitIndex"]


def __getattr__(name: str) -> Any:
    if name == "QdrantRecordStore":
        from tansaku.store.qdrant.records import QdrantRecordStore

        return QdrantRecordStore
    if name == "QdrantUnitIndex":
        from tansaku.store.qdrant.units import QdrantUnitIndex

        return QdrantUnitIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
