"""Names a package imports on first use (PEP 562), so that importing it loads nothing heavy.

>>> __getattr__, __dir__ = lazy_names(__name__, {"search": "tansaku.search.engine"}, globals())

The package lists under ``TYPE_CHECKING`` what it imports this way, for type checkers and
editors; a name is imported from its module when first read, then kept in the package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, modules: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose ``namespace`` is its
    ``globals()``: a name of ``modules`` (name → the module that defines it) is imported from
    its module on first use; any other unknown name raises :class:`AttributeError`."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *modules])

    return __getattr__, __dir__
