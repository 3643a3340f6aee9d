"""The tool registry as LangChain tools (``langchain-core``; extra ``langchain``).

>>> from tansaku.integrations.langchain import as_langchain_tools
>>> tools = as_langchain_tools(toolset(ts, team="shinjuku"))
>>> llm.bind_tools(tools)                                  # any LangChain chat model
>>> tools[0].invoke({"query": "冷蔵庫の故障"})              # the JSON text tansaku's agent sees

Each tool is a ``StructuredTool`` with the registry's name, Japanese description and JSON schema
(``args_schema`` as a dict, so a model sees exactly the schema the MCP server and the agent
publish). A call goes through :meth:`Toolset.call`: the arguments are checked there, the scope
(team, collections) is the toolset's, and a failure comes back as ``{"error": "…"}`` in Japanese
— the tool never raises, so an agent executor's loop goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tansaku.errors import MissingExtra

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from tansaku.tools.registry import Toolset
    from tansaku.tools.spec import ToolSpec


def _structured_tool() -> Any:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        raise MissingExtra("langchain-core", "langchain", "LangChain 用のツール") from None
    return StructuredTool


def _caller(toolset: Toolset, name: str) -> Any:
    def call(**arguments: Any) -> str:
        return toolset.call(name, arguments)

    call.__name__ = name
    return call


def as_langchain_tool(toolset: Toolset, spec: ToolSpec) -> BaseTool:
    """One tool of ``toolset`` as a LangChain ``StructuredTool``."""
    structured_tool = _structured_tool()
    tool: BaseTool = structured_tool.from_function(
        func=_caller(toolset, spec.name),
        name=spec.name,
        description=spec.description,
        args_schema=spec.parameters,
        infer_schema=False,
    )
    return tool


def as_langchain_tools(toolset: Toolset) -> list[BaseTool]:
    """Every tool of ``toolset`` (whatever the registry holds) as LangChain tools."""
    return [as_langchain_tool(toolset, spec) for spec in toolset.specs]
