"""Errors raised while running a plan, shaped like the catalog's DorisError (code, sqlstate,
`client_message()`) so the connection reports them without the executor importing the catalog."""

from __future__ import annotations

from executor.expressions.errors import ExpressionError


class QueryInterrupted(ExpressionError):
    """KILL QUERY (or KILL CONNECTION) stopped the query between two operators or batches."""

    code = 1317
    sqlstate = "70100"
    doris_prefix = False

    def __init__(self) -> None:
        super().__init__("Query execution was interrupted")


class ExecutionError(ExpressionError):
    """A query failed at run time (a scalar subquery returned several rows, a memory limit...)."""
