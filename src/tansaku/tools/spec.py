"""Tools from typed Python functions: a name, a Japanese description and a JSON schema derived
from the signature — one definition for every consumer (the agent loop, an MCP server, the
LangChain adapter, the HTTP server).

>>> @tool("get_current_time", "現在の日時を返します。…")
... def get_current_time(scope: ToolScope) -> dict[str, str]: ...

The first parameter is always the :class:`ToolScope` — the team, the collections, "now" — bound
when the toolset is built, never part of the schema: a model cannot name another team.
Parameter descriptions come from ``Annotated[type, "説明"]``.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin

from tansaku.errors import TansakuError

if typing.TYPE_CHECKING:
    from tansaku.client import Tansaku
    from tansaku.search.types import SearchResult


class ToolError(TansakuError):
    """A tool cannot do what it was asked (the message goes back to the model, in Japanese)."""


@dataclass(frozen=True, kw_only=True)
class ToolScope:
    """What a tool may touch, fixed by whoever builds the toolset (from credentials, never
    from a request body or a model's arguments)."""

    client: Tansaku
    """The workspace the tools read."""
    team: str = "default"
    """The team every search and statistic is scoped to."""
    collections: Mapping[str, str] = field(default_factory=dict)
    """Role → collection name: ``reports``, ``manuals`` … (a role missing: the tool says so)."""
    now: datetime | None = None
    """The reference time of relative dates (None: the current time in Asia/Tokyo)."""
    tables: Any = None
    """The registered tables (a ``tansaku.tables.TableDatabase``) for statistics and SQL."""
    store: str | None = None
    """The one store the user may see in statistics (None: every store)."""
    user: str | None = None
    """Who asks (design 000's context: 田中太郎): named to the model, never used for access."""

    def search(self, query: str, collection: str, **options: Any) -> SearchResult:
        """A search of ``collection`` as the scope's team, relative dates read at the scope's
        "now" (never a team or a time a model names); ``options`` as :meth:`Tansaku.search`'s
        (``top_k``, ``filter``, ``where``, ``axes`` …)."""
        return self.client.search(
            query, collection=collection, team=self.team, now=self.now, **options
        )


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    name: str
    """What the model calls (``search_past_cases``)."""
    description: str
    """Japanese: what it does, when to use it and when not, its arguments, examples."""
    parameters: dict[str, Any]
    """JSON schema of the arguments (an object), derived from the signature."""
    fn: Callable[..., Any] = field(repr=False, compare=False)
    """The function: ``fn(scope, **arguments)``."""

    def to_openai(self) -> dict[str, Any]:
        """The chat-completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema(hint: Any) -> tuple[dict[str, Any], bool]:
    """(JSON schema, optional) of a type hint."""
    description = ""
    if get_origin(hint) is typing.Annotated:
        hint, *extras = get_args(hint)
        description = next((e for e in extras if isinstance(e, str)), "")
    optional = False
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        optional = len(args) < len(get_args(hint))
        hint = args[0] if len(args) == 1 else hint
        origin = get_origin(hint)
    if hint in _SCALARS:
        schema: dict[str, Any] = {"type": _SCALARS[hint]}
    elif origin is Literal:
        values = list(get_args(hint))
        schema = {"type": _SCALARS[type(values[0])], "enum": values}
    elif origin in (list, tuple) and get_args(hint) and get_args(hint)[0] in _SCALARS:
        schema = {"type": "array", "items": {"type": _SCALARS[get_args(hint)[0]]}}
    else:
        raise TypeError(f"unsupported tool parameter type: {hint!r}")
    if description:
        schema["description"] = description
    return schema, optional


def parameters_of(fn: Callable[..., Any]) -> dict[str, Any]:
    """The JSON schema of ``fn``'s parameters after the scope."""
    hints = typing.get_type_hints(fn, include_extras=True)
    props: dict[str, Any] = {}
    required: list[str] = []
    params = list(inspect.signature(fn).parameters.values())[1:]
    for p in params:
        schema, optional = _schema(hints[p.name])
        if p.default is not inspect.Parameter.empty:
            if p.default is not None:
                schema["default"] = p.default
        elif not optional:
            required.append(p.name)
        props[p.name] = schema
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def tool(name: str, description: str) -> Callable[[Callable[..., Any]], ToolSpec]:
    """Turn ``fn(scope, **typed arguments)`` into a :class:`ToolSpec`."""

    def wrap(fn: Callable[..., Any]) -> ToolSpec:
        return ToolSpec(name=name, description=description, parameters=parameters_of(fn), fn=fn)

    return wrap
