"""Every search the server runs — the API's and the agent tools' — recorded where feedback and
the dashboard read it: the SEARCH_EVENT line (as before), a row in appdb (built with the search,
written in batches by :class:`~tansaku.server.event_writer.EventWriter`), and the metrics.

Installed on the shared client with ``Tansaku.with_services(events=…)`` (an atomic swap of its
frozen services) and swapped back when the app shuts down. Each row also keeps the versions the
search ran against (``index_version``: the collection's generation, ``embedding_version``: its
embedder), which feedback on it stores (design 004).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tansaku.appdb.events import TOP_N, EventRow
from tansaku.appdb.models import utcnow
from tansaku.search.events import SearchEventLog
from tansaku.search.types import SearchResult
from tansaku.server.event_writer import EventWriter
from tansaku.server.metrics import Metrics

log = logging.getLogger("tansaku.server")


def collection_versions(client: Any, name: str) -> dict[str, str]:
    """``index_version`` (the committed generation, e.g. ``g000012``) and ``embedding_version``
    (the embedder its vectors came from) of collection ``name``; empty when it cannot be read."""
    try:
        return client.collection(name).versions
    except Exception:  # deleted meanwhile, another backend: no versions, never a failure
        return {}


class RecordingEventLog(SearchEventLog):
    """``writer``: where appdb rows go (None: written with the search, one transaction each)."""

    def __init__(
        self,
        path: Path | None,
        *,
        appdb: Any,
        metrics: Metrics,
        writer: EventWriter | None = None,
    ) -> None:
        super().__init__(path)
        self.appdb = appdb
        self.metrics = metrics
        self.writer = writer

    def emit(self, result: SearchResult) -> dict[str, Any]:
        event = super().emit(result)
        self.metrics.observe_search(result, float(result.timings_ms.get("total", 0.0)) / 1000)
        team = event.get("tenant")
        if self.appdb is not None and team:
            try:
                titles = tuple(
                    str(h.record.metadata.get("title") or h.doc_id) for h in result.hits[:TOP_N]
                )
                row = EventRow(str(team), {**result.versions, **event}, titles, utcnow())
                if self.writer is not None:
                    self.writer.put(row)
                else:
                    self.appdb.events.record_many([row])
            except Exception:  # the search answered; a lost row must not fail it
                log.exception("search event %s not recorded in appdb", result.query_id)
        return event
