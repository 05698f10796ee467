"""SET GLOBAL values kept across restarts, as Doris keeps them in its edit log and image.

The catalog holds `global_variables` (name -> value, JSON-able: the typed value the server's
GlobalVariables holds after the SET); the server applies them over the defaults at start-up
(server/main.py). Journal operation (an entry of `catalog/catalog.py:_APPLY`):

    op                   data
    set_global_variable  {name, value}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def persist_global_variable(cat: Catalog, name: str, value: Any) -> None:
    """Journal a SET GLOBAL (after the server checked and applied it)."""
    with cat.lock:
        cat._log("set_global_variable", {"name": name.lower(), "value": value})  # noqa: SLF001


def _apply_set_global_variable(cat: Catalog, data: dict) -> None:
    cat.global_variables[data["name"]] = data["value"]


APPLY = {"set_global_variable": _apply_set_global_variable}
