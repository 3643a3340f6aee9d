"""``tansaku serve``: the JSON API (and the web UI) over one workspace.

>>> from tansaku.server import create_app, ServerSettings
>>> app = create_app("./.tansaku")          # an ASGI app: uvicorn, or tansaku.server.run

The names are imported on first use, so that a process importing one module of the package
(a job's worker, a search process) does not load the web framework.
"""

from typing import TYPE_CHECKING

from tansaku.lazy import lazy_names

if TYPE_CHECKING:
    from tansaku.server.app import create_app
    from tansaku.server.auth import ServerNotSecured
    from tansaku.server.settings import ServerSettings

__all__ = ["ServerNotSecured", "ServerSettings", "create_app"]
__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "create_app": "tansaku.server.app",
        "ServerNotSecured": "tansaku.server.auth",
        "ServerSettings": "tansaku.server.settings",
    },
    globals(),
)
