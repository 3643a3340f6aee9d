"""Maintenance of a workspace's collections: ``doctor`` (check and repair) and ``reembed`` (move
a collection to another embedding model), behind ``tansaku doctor`` and ``tansaku reembed``."""
