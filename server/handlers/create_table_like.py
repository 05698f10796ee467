"""CREATE TABLE [IF NOT EXISTS] t2 LIKE [db.]t1 [WITH ROLLUP [(r1, ...)]], as Doris does it: the
new table gets t1's columns, keys, partitions (empty), distribution, indexes and properties —
the statement SHOW CREATE TABLE prints for t1, parsed again under the new name — and, with
WITH ROLLUP, t1's rollups (all, or the named ones)."""

from __future__ import annotations

from catalog.errors import AnalysisError
from catalog.statements import CreateTableStmt, RollupDesc
from server.handlers.context import StatementContext
from server.handlers.show_create import show_create_table_sql
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor


def like_statement(stmt: CreateTableStmt, ctx: StatementContext) -> CreateTableStmt:
    src_db, src_name = stmt.like
    with ctx.catalog.lock:
        source = ctx.catalog.get_table(src_db or ctx.db, src_name)
        sql = show_create_table_sql(source)
        rollups = [(r.name, list(r.columns)) for r in source.rollups() if not r.is_mv]
    head = f"CREATE TABLE `{source.name}` ("
    if not sql.startswith(head):
        raise AnalysisError(f"Cannot create a table like {source.name}")
    new = parse_create_table(TokenCursor("CREATE TABLE `__like__` (" + sql[len(head):]))
    new.db, new.name, new.if_not_exists = stmt.db, stmt.name, stmt.if_not_exists
    if stmt.like_rollups is not None:
        wanted = {n.lower() for n in stmt.like_rollups}
        known = {n.lower() for n, _ in rollups}
        missing = sorted(wanted - known)
        if missing:
            raise AnalysisError(f"Rollup index[{missing[0]}] not exists in Table[{source.name}]")
        new.rollups = [RollupDesc(name=n, columns=cols) for n, cols in rollups
                       if not wanted or n.lower() in wanted]
    return new


