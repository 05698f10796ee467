"""FE configuration at runtime: the one place FE configs live after start-up.

`server/config.py:Config` is read once from `conf/minidoris.conf`; `FeConfig` is built from it
by `server/main.py` and is what `ADMIN SET FRONTEND CONFIG ("k" = "v")` changes and
`ADMIN SHOW FRONTEND CONFIG [LIKE '...']` lists (Doris's columns: Key, Value, Type, IsMutable,
MasterOnly, Comment). Each entry is declared once below with Doris's Java type name and its
mutability; `set` validates like Doris's ConfigBase (unknown key, immutable key, wrong type)
and then calls the listeners registered for that key, so a change is effective at once (the
dynamic partition scheduler reschedules its job, the catalog rolls its journal at the new
count). Layers that need a value read it here when they act, never from the config file.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from catalog.errors import DdlError


@dataclass(frozen=True)
class ConfigSpec:
    name: str
    java_type: str      # Doris's type column: boolean, int, long, String
    mutable: bool
    master_only: bool
    comment: str = ""


# Doris's FE configs that minidoris has, in Doris's declaration order.
FE_CONFIGS: tuple[ConfigSpec, ...] = (
    ConfigSpec("meta_dir", "String", False, False),
    ConfigSpec("http_port", "int", False, False),
    ConfigSpec("query_port", "int", False, False),
    ConfigSpec("priority_networks", "String", False, False),
    ConfigSpec("edit_log_roll_num", "int", True, True),
    ConfigSpec("dynamic_partition_enable", "boolean", True, True),
    ConfigSpec("dynamic_partition_check_interval_seconds", "long", True, True),
    ConfigSpec("max_dynamic_partition_num", "int", True, True),
    ConfigSpec("disable_colocate_join", "boolean", True, False),
    ConfigSpec("disable_colocate_relocate", "boolean", True, True),
    ConfigSpec("disable_colocate_balance", "boolean", True, True),
    ConfigSpec("tablet_schedule_interval_ms", "long", False, True),
    ConfigSpec("catalog_trash_expire_second", "long", True, True),
    ConfigSpec("max_same_name_catalog_trash_num", "int", True, True),
    ConfigSpec("alter_table_timeout_second", "int", True, True),
    ConfigSpec("enable_outfile_to_local", "boolean", False, False),
    ConfigSpec("enable_stream_load_record", "boolean", True, False,
               "record Stream Loads for SHOW STREAM LOAD (a BE config in Doris, default false)"),
    ConfigSpec("max_stream_load_record_size", "int", True, False),
    ConfigSpec("spark_load_etl_delay_ms", "long", True, True,
               "minidoris only, a test hook: a Spark Load job waits this long after its ETL"),
    ConfigSpec("rollup_job_tablet_delay_ms", "long", True, True,
               "minidoris only, a test hook: an ADD ROLLUP job waits this long per tablet"),
)

_INT_RANGE = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}

Listener = Callable[[Any], None]


def _parse(spec: ConfigSpec, raw: str) -> Any:
    """The typed value of `raw`; ValueError with Doris's wording if it does not fit."""
    text = raw.strip()
    if spec.java_type == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError(f"Invalid boolean value: {raw}")
        return text.lower() == "true"
    if spec.java_type in _INT_RANGE:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f'For input string: "{raw}"') from None
        lo, hi = _INT_RANGE[spec.java_type]
        if not lo <= value <= hi:
            raise ValueError(f'Value out of range. Value:"{raw}"')
        return value
    return raw


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class FeConfig:
    """Typed FE config values, changeable at runtime where Doris allows it."""

    def __init__(self, values: dict[str, Any], specs: Iterable[ConfigSpec] = FE_CONFIGS):
        self._specs = {s.name: s for s in specs}
        self._values = {name: values[name] for name in self._specs}
        self._listeners: dict[str, list[Listener]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def from_object(config: object, specs: Iterable[ConfigSpec] = FE_CONFIGS) -> FeConfig:
        """Initial values from an object with one attribute per config (server Config)."""
        specs = tuple(specs)
        return FeConfig({s.name: getattr(config, s.name) for s in specs}, specs)

    def get(self, name: str) -> Any:
        with self._lock:
            return self._values[name]

    def on_change(self, name: str, listener: Listener) -> None:
        """Call `listener(new_value)` after every successful `set` of `name`."""
        self._listeners.setdefault(name, []).append(listener)

    def set(self, name: str, raw: str) -> None:
        """ADMIN SET FRONTEND CONFIG: validate, store, notify."""
        spec = self._specs.get(name)
        if spec is None:
            raise DdlError(f"Config '{name}' does not exist")
        if not spec.mutable:
            raise DdlError(f"Config '{name}' is not mutable")
        try:
            value = _parse(spec, raw)
        except ValueError as e:
            raise DdlError(f"Failed to set config '{name}'. err: {e}") from None
        with self._lock:
            self._values[name] = value
        for listener in self._listeners.get(name, []):
            listener(value)

    def rows(self, keep: Callable[[str], bool] = lambda name: True) -> list[tuple[str, ...]]:
        """(Key, Value, Type, IsMutable, MasterOnly, Comment) per config, in declared order."""
        with self._lock:
            return [(s.name, _text(self._values[s.name]), s.java_type, _text(s.mutable),
                     _text(s.master_only), s.comment)
                    for s in self._specs.values() if keep(s.name)]
