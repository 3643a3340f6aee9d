"""The JSON API, one module per kind of resource; each route is a thin adapter over the
library (``tansaku.client``, ``tansaku.agent``, ``tansaku.tables``, ``tansaku.appdb``)."""
