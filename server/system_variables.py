"""Doris's system variables beyond the basic table in variables.py: every variable of Doris's FE
with its default and scope flag (doris_variables_data.py, from SessionVariable.java /
GlobalVariable.java), a few of Doris 2.1 / MySQL that table lacks, and the session/global
value semantics.

- A session reads its own value if it SET one, else the current GLOBAL value (SET GLOBAL
  changes new sessions and the current one, as in Doris, and is journaled: the catalog keeps
  it across restarts, catalog/global_variables.py, and `restore_globals` applies it).
- Flags as Doris's VarAttr: READ_ONLY (SET fails, 1238), GLOBAL (global only: SET without
  GLOBAL fails, 1229), SESSION_ONLY (SET GLOBAL fails, 1228); the rest may be set either way.
- INVISIBLE variables are read and set like the others but SHOW VARIABLES and
  information_schema.session/global_variables do not list them (`list()`).
- An unknown name is 1193 `Unknown system variable 'x'`, in SET and in SELECT @@x.
Most are planner/engine knobs that minidoris accepts and shows but does not act on.
"""

from __future__ import annotations

from mysql_mimic.errors import MysqlError
from mysql_mimic.variables import GlobalVariables, SessionVariables

from catalog.errors import DorisError
from server.doris_variables_data import (DORIS_SOURCE_VARIABLES, GLOBAL, INVISIBLE, READ_ONLY,
                                         SESSION_ONLY)


def bool_value(v) -> bool:
    if isinstance(v, str):
        low = v.strip().lower()
        if low not in ("1", "true", "on", "0", "false", "off"):
            raise ValueError(v)
        return low in ("1", "true", "on")
    return bool(v)


# name -> (type, default): the variables of Doris 2.1 (and MySQL's, kept for tools) that the
# FE source table below does not carry
MORE_DORIS_VARIABLES = {
    "auto_increment_offset": (int, 1), "character_set_database": (str, "utf8mb4"),
    "lc_time_names": (str, "en_US"), "enable_spilling": (bool_value, False),
    "faster_float_convert": (bool_value, False),
    "enable_exchange_node_parallel_merge": (bool_value, False), "load_mem_limit": (int, 0),
    "codegen_level": (int, 0), "enable_join_spill": (bool_value, False),
    "enable_sort_spill": (bool_value, False), "enable_agg_spill": (bool_value, False),
    "query_freshness_tolerance_ms": (int, -1), "cte_max_recursion_depth": (int, 100),
    "disable_colocate_join": (bool_value, False),
}

# Every variable of Doris's FE (doris_variables_data.py) with its default, under the ones
# declared above and in variables.py (whose defaults stay), and its VarAttr scope flag
# (variables without one can be set per session and globally).
for _name, (_type, _default, _flag) in DORIS_SOURCE_VARIABLES.items():
    MORE_DORIS_VARIABLES.setdefault(_name, (bool_value if _type is bool else _type, _default))
FLAGS = {name: flag for name, (_, _, flag) in DORIS_SOURCE_VARIABLES.items()
         if flag in (READ_ONLY, GLOBAL, SESSION_ONLY)}
INVISIBLE_VARIABLES = {name for name, (_, _, flag) in DORIS_SOURCE_VARIABLES.items()
                       if flag == INVISIBLE}


class UnknownVariable(DorisError):
    code = 1193
    sqlstate = "HY000"

    def __init__(self, name: str):
        super().__init__(f"Unknown system variable '{name}'")


class VariableScopeError(DorisError):
    """SET of a read-only variable, or in the wrong scope (Doris's ErrorCode texts)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _listed(pairs: list[tuple[str, object]]) -> list[tuple[str, object]]:
    return [(name, value) for name, value in pairs if name not in INVISIBLE_VARIABLES]


class DorisGlobalVariables(GlobalVariables):
    generation = 0  # moved by every SET GLOBAL: part of each session's fingerprint

    def set(self, name, value, force: bool = False) -> None:  # noqa: D102
        super().set(name, value, force)
        self.generation += 1

    def list(self) -> list[tuple[str, object]]:  # noqa: D102 - INVISIBLE ones are not listed
        return _listed(super().list())

    def get(self, name, default=None):  # noqa: D102 - Mapping.get would hide unknown names
        return self.get_variable(name)

    def get_variable(self, name: str):
        name = name.lower()
        values = self._values  # a value set (the common case) without the schema's lookup
        if name in values:
            return values[name]
        defaults = self.__dict__.setdefault("_defaults", {})  # a default, looked up once
        if name in defaults:
            return defaults[name]
        try:
            found = defaults[name] = super().get_variable(name)
            return found
        except MysqlError:
            raise UnknownVariable(name.lower()) from None


class DorisSessionVariables(SessionVariables):
    """The session's own values over the current global ones."""

    _fingerprint: tuple | None = None

    def set(self, name, value, force: bool = False) -> None:  # noqa: D102
        super().set(name, value, force)
        self._fingerprint = None

    def fingerprint(self) -> tuple:
        """Every value this session sees, as a hashable key (the bound-plan cache's: a plan
        bound under other values may differ)."""
        own = self._fingerprint
        if own is None:
            own = self._fingerprint = tuple(sorted(self._values.items(), key=lambda kv: kv[0]))
        return own, self.global_variables.generation

    def list(self) -> list[tuple[str, object]]:  # noqa: D102
        return _listed(super().list())

    def get(self, name, default=None):  # noqa: D102
        return self.get_variable(name)

    def get_variable(self, name: str):
        name = name.lower()
        if name in self._values:
            return self._values[name]
        return self.global_variables.get_variable(name)

    def default(self, name: str):
        return self.schema[name.lower()][1]

    def set_scoped(self, name: str, value, scope: str | None) -> None:
        """SET [GLOBAL | SESSION] name = value with Doris's checks."""
        name = name.lower()
        if name not in self.schema:
            raise UnknownVariable(name)
        flag = FLAGS.get(name)
        if flag == READ_ONLY:
            raise VariableScopeError(1238, f"Variable '{name}' is a read only variable")
        if scope == "GLOBAL":
            if flag == SESSION_ONLY:
                raise VariableScopeError(
                    1228, f"Variable '{name}' is a SESSION variable and can't be used with SET GLOBAL")
            self.global_variables.set(name, value, force=True)
            self._values.pop(name, None)
            self._fingerprint = None
            return
        if flag == GLOBAL:
            raise VariableScopeError(
                1229, f"Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL")
        self.set(name, value, force=True)

    def changed(self, name: str) -> bool:
        return self.get_variable(name) != self.default(name)

    def info_rows(self) -> list[tuple[str, object, object, object]]:
        """(name, session value, global value, default) of every variable, for
        information_schema.session_variables / global_variables."""
        return [(name, value, self.global_variables.get(name), self.default(name))
                for name, value in self.list()]


def restore_globals(global_vars: GlobalVariables, saved: dict) -> None:
    """Apply the SET GLOBAL values the catalog kept (catalog/global_variables.py) at start-up;
    a name this version does not know is skipped."""
    for name, value in saved.items():
        try:
            global_vars.set(name, value, force=True)
        except (MysqlError, DorisError, TypeError, ValueError):
            continue
