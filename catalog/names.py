"""Doris's name rules (FeNameFormat, with unicode names off, the default): what a database,
table or column may be called. A name that breaks them is refused before anything is created,
with Doris's error numbers (1102, 1103, 1166). Names never reach the file system (storage is
keyed by tablet ids), but a name Doris refuses must not exist here either."""

from __future__ import annotations

import re

from catalog.errors import DorisError

DB_NAME_REGEX = r"^[a-zA-Z][a-zA-Z0-9\-_]{0,63}$"
TABLE_NAME_REGEX = r"^[a-zA-Z][a-zA-Z0-9\-_]*$"
COLUMN_NAME_REGEX = r"^[_a-zA-Z@0-9\s/][.a-zA-Z0-9_+\-/?@#$%^&*\"\s,:]{0,255}$"
TABLE_NAME_LENGTH_LIMIT = 64
PARTITION_NAME_REGEX = r"^[a-zA-Z][a-zA-Z0-9_]*$"


def quote_identifier(name: str) -> str:
    """`name` as a backquoted SQL identifier (a backquote in it doubled)."""
    return "`" + name.replace("`", "``") + "`"


class WrongName(DorisError):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def check_database_name(name: str) -> None:
    if not re.fullmatch(DB_NAME_REGEX, name or ""):
        raise WrongName(f"Incorrect database name '{name}'", 1102)


def check_table_name(name: str) -> None:
    if not re.fullmatch(TABLE_NAME_REGEX, name or "") or len(name) > TABLE_NAME_LENGTH_LIMIT:
        raise WrongName(f"Incorrect table name '{name}'. Table name regex is '{TABLE_NAME_REGEX}'",
                        1103)


def check_column_name(name: str) -> None:
    if not re.fullmatch(COLUMN_NAME_REGEX, name or ""):
        raise WrongName(f"Incorrect column name '{name}'. Column regex is '{COLUMN_NAME_REGEX}'",
                        1166)


def check_partition_name(name: str) -> None:
    if not re.fullmatch(PARTITION_NAME_REGEX, name or "") or len(name) > TABLE_NAME_LENGTH_LIMIT:
        raise WrongName(f"Incorrect partition name '{name}'. Partition name regex is "
                        f"'{PARTITION_NAME_REGEX}'", 1567)


COMMON_NAME_REGEX = DB_NAME_REGEX  # FeNameFormat: the same rule


def check_common_name(kind: str, name: str) -> None:
    """FeNameFormat.checkCommonName: rules, groups, keys and other named objects (5063)."""
    if not re.fullmatch(COMMON_NAME_REGEX, name or ""):
        raise WrongName(f"Incorrect {kind} name '{name}', required format is "
                        f"'{COMMON_NAME_REGEX}'", 5063)
