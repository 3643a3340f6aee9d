"""Collections written in an older storage layout, found (:func:`pending`) and brought to the
current one (:func:`migrate_workspace`) — what ``tansaku migrate`` runs. A collection is also
migrated when it is opened; see :mod:`tansaku.backends.embedded.migrate` for the steps."""

from __future__ import annotations

from tansaku.backends.embedded.migrate import Migration, migrate_workspace, pending
from tansaku.collection.stats import STATE_VERSION as LAYOUT

__all__ = ["LAYOUT", "Migration", "migrate_workspace", "pending"]
