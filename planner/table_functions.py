"""Doris's table-valued functions in FROM: `numbers("number" = "n")` yields one BIGINT column
`number` with the values 0 .. n-1 (an InlineTable built once at binding, as numpy's arange).
Functions that read files are registered by the layer that owns the readers
(`register`: the server registers `local()`, server/local_tvf.py); the others Doris has
(s3(), hdfs()) are refused."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported
from storage.types import DataType

MAX_NUMBERS = 100_000_000  # rows numbers() materialises here (Doris streams it)

# a function's rows, and the declared types of its columns (None: the Arrow types')
Rows = tuple[pa.Table, list[DataType] | None]
_REGISTERED: dict[str, Callable[[dict[str, str]], Rows]] = {}


def register(name: str, function: Callable[[dict[str, str]], Rows]) -> None:
    """Make `name(key = value, ...)` in FROM call `function(arguments)` for its rows."""
    _REGISTERED[name.lower()] = function


def table_function(node: exp.Anonymous) -> tuple[str, pa.Table, list[DataType] | None]:
    """(function name, its rows, its columns' declared types or None) of
    `name(key = value, ...)` in FROM."""
    name = node.name.lower()
    args = {}
    for e in node.expressions:
        if not isinstance(e, exp.EQ) or not isinstance(e.expression, exp.Literal):
            raise AnalysisError(f"table valued function {name} takes \"key\" = \"value\" "
                                f"arguments")
        args[e.this.name.lower()] = e.expression.this
    if name in _REGISTERED:
        return (name, *_REGISTERED[name](args))
    if name != "numbers":
        raise NotSupported(f"Table valued function {name} is not supported yet")
    raw = args.get("number")
    if raw is None:
        raise AnalysisError("Can not find number")
    try:
        n = int(raw)
    except ValueError:
        raise AnalysisError(f"can not parse `number` param to natural number: {raw}") from None
    if n < 0:
        raise AnalysisError(f"can not parse `number` param to natural number: {raw}")
    if n > MAX_NUMBERS:
        raise NotSupported(f"numbers() over {MAX_NUMBERS} rows is not supported here")
    return name, pa.table({"number": pa.array(np.arange(n, dtype=np.int64))}), None
