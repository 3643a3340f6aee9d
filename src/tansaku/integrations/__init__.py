"""Adapters that hand the tool registry (``tansaku.tools``) to other ecosystems.

- :mod:`tansaku.integrations.mcp_server` — an MCP server (official ``mcp`` SDK; stdio and
  streamable HTTP) exposing every tool of a :class:`~tansaku.tools.Toolset`; extra ``mcp``.
- :mod:`tansaku.integrations.langchain` — the same tools as LangChain ``StructuredTool`` objects;
  extra ``langchain``.

Both take whatever the toolset holds and call :meth:`Toolset.call`, so names, Japanese
descriptions, JSON schemas, results and errors are exactly what tansaku's own agent sees, and the
scope (team, collections) stays the one the toolset was built with. Importing this package costs
nothing: each adapter imports its SDK on first use.
"""
