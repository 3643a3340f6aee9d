"""``tansaku serve``: the JSON API (and the web UI) over one workspace.

>>> from tansaku.server import create_app, ServerSettings
>>> app = create_app("./.tansaku")          # an ASGI app: uvicorn, or tansaku.server.run
"""

from tansaku.server.app import create_app
from tansaku.server.auth import ServerNotSecured
from tansaku.server.settings import ServerSettings

__all__ = ["ServerNotSecured", "ServerSettings", "create_app"]
