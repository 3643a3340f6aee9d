"""Agent tools: typed functions → tool specs (name, Japanese description, JSON schema), bound to
a scope (team, collections, "now") when the toolset is built.

>>> tools = tansaku.tools.toolset(ts, team="shinjuku", collections={"reports": "reports"})
>>> tools.call("search_past_cases", '{"query": "冷蔵庫の故障"}')   # a JSON string
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from tansaku.errors import check_keywords
from tansaku.tools.analytics import ANALYTICS_TOOLS, sql_tool_specs
from tansaku.tools.knowledge import knowledge_specs
from tansaku.tools.registry import Toolset
from tansaku.tools.roles import scope_mapping
from tansaku.tools.search import SEARCH_TOOLS
from tansaku.tools.spec import ToolError, ToolScope, ToolSpec, parameters_of, tool
from tansaku.workspace import DEFAULT_TEAM, validate_name

if TYPE_CHECKING:
    from tansaku.client import Tansaku

DEFAULT_COLLECTIONS = {
    "reports": "reports",
    "manuals": "manuals",
    "notes": "notes",
    "cards": "cards",
}


class ScopeOptions(TypedDict, total=False):
    """The keywords that fix a toolset's scope (:func:`toolset`, and ``tansaku.agent.ask``
    which builds one), each optional; they become the :class:`ToolScope`."""

    team: str
    """Whose records and statistics (default ``DEFAULT_TEAM``)."""
    collections: Mapping[str, str] | Sequence[str] | None
    """Collection names (roles from their configs) or role → name (default: one per role)."""
    now: datetime | None
    """The time relative dates are read at (default: the current time in Asia/Tokyo)."""
    tables: Any
    """A ``TableDatabase``: adds the statistics and SQL tools (default: none)."""
    store: str | None
    """The one store the statistics may show (default: none, every store)."""
    user: str | None
    """Who asks, named to the model (default: nobody)."""


def toolset(client: Tansaku, **scope: Unpack[ScopeOptions]) -> Toolset:
    """The built-in tools bound to ``team`` and ``collections``: the names of the collections
    in scope (each collection's role — ``reports``, ``manuals``, ``notes``, ``cards`` — read
    from its config's ``source_type``), or a role → collection name mapping; any collection is
    searched by ``search_rag_knowledge_base`` and by the offline answer. With ``tables`` (a
    ``TableDatabase``) also the statistics and the registry's SQL tools, scoped to ``store``
    when given (``user``: who asks, named to the model). The lab-note and card tools are there
    when their collection exists; the lab-note modes are its axes. ``now``: the reference time
    of relative dates (:class:`ScopeOptions`)."""
    check_keywords("toolset", scope, ScopeOptions)
    team = validate_name(scope.get("team", DEFAULT_TEAM), "チーム名")
    tables = scope.get("tables")
    bound = ToolScope(
        client=client,
        team=team,
        collections=_scope_collections(client, scope.get("collections")),
        now=scope.get("now"),
        tables=tables,
        store=scope.get("store"),
        user=scope.get("user"),
    )
    specs = [*SEARCH_TOOLS, *knowledge_specs(bound)]
    if tables is not None:
        specs += [*ANALYTICS_TOOLS, *sql_tool_specs(tables)]
    return Toolset(specs, bound)


def _scope_collections(
    client: Tansaku, collections: Mapping[str, str] | Sequence[str] | None
) -> dict[str, str]:
    if collections is None:
        return dict(DEFAULT_COLLECTIONS)
    if isinstance(collections, Mapping):
        return dict(collections)
    if isinstance(collections, str):
        collections = [collections]
    names = [validate_name(n) for n in collections]
    configs = {n: client.collection(n).config if client.has_collection(n) else None for n in names}
    return scope_mapping(names, configs)


__all__ = [
    "ScopeOptions",
    "ToolError",
    "ToolScope",
    "ToolSpec",
    "Toolset",
    "parameters_of",
    "tool",
    "toolset",
]
