"""Moving a collection between workspaces and backends without re-embedding.

>>> report = export_collection(ts, "reports", Path("backup/"))   # backup/reports.tansaku.tar
>>> import_collection(other, report.path, name="reports")        # no embedding call

The file holds the config, the statistics and every team's records with their stored dense
and sparse vectors (format: :mod:`tansaku.transfer.format`); an import checks it whole first
and writes through one writer of the receiving backend. The embedding cache is not exported.

Within one workspace: :func:`tansaku.transfer.merge.merge_collections` merges collections into
another (records keep their ids and vectors), :func:`tansaku.transfer.reset.reset_team` removes a
team's records from every collection at once.
"""

from __future__ import annotations

from tansaku.transfer.export import ExportReport, default_path, export_collection
from tansaku.transfer.format import FORMAT_VERSION, SUFFIX, Manifest, TransferError
from tansaku.transfer.importer import ImportReport, import_collection

__all__ = [
    "FORMAT_VERSION",
    "SUFFIX",
    "ExportReport",
    "ImportReport",
    "Manifest",
    "TransferError",
    "default_path",
    "export_collection",
    "import_collection",
]
