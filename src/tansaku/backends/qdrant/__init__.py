"""The Qdrant server backend: collections in a Qdrant server or cluster (or qdrant-client's
local mode), opened by ``tansaku.connect("http://…")``.

``backend`` (writers, views, the dirty-flag recovery), ``storage`` (a collection's records and
units in the server) and ``registry`` (the config and committed statistics of every
collection). The engine adapters it writes through live in :mod:`tansaku.store.qdrant`;
``qdrant-client`` is the ``qdrant`` extra.
"""
