"""The embedded backend: every collection a folder of generations of qdrant-edge shards.

``generations`` (the folder layout, ``CURRENT``, readers' leases), ``handles`` (a generation's
shards opened), ``views`` (read-only views of the last commit, cached per fingerprint),
``writer`` (one writer, a working generation, the atomic commit) and ``migrate`` (older layouts
brought forward on open). :class:`tansaku.backends.EmbeddedBackend` is its entry point.
"""
