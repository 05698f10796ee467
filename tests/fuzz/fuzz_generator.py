"""Random tables and queries for the differential SQL fuzzer (tests/fuzz/fuzz_oracles.py).

Everything comes from one `random.Random`, so a seed reproduces a run. The SQL is restricted
to what MySQL (Doris) and DuckDB agree on, so that DuckDB can be the reference:
- INT columns with small values (no overflow) and short VARCHARs, about a quarter NULL;
- arithmetic + - *, and / or % by a non-zero literal only (x/0 is NULL in MySQL, inf or an
  error in DuckDB); no string concatenation (CONCAT with NULL differs); LIKE is case-sensitive
  in both (Doris's byte-wise comparison, not MySQL's default collation);
- booleans never in arithmetic; a scalar subquery is an aggregate (one row in both engines);
- GROUP BY queries select only grouping expressions and aggregates (ONLY_FULL_GROUP_BY).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

INT, STR, BOOL = "int", "str", "bool"
WORDS = ["a", "b", "ab", "ba", "B", "abc", "x", ""]


@dataclass
class Table:
    name: str
    columns: list[tuple[str, str]]          # (name, INT / STR)
    rows: list[tuple] = field(default_factory=list)

    def doris_ddl(self, buckets: int) -> str:
        cols = ", ".join(f"{n} {'INT' if t == INT else 'VARCHAR(8)'}" for n, t in self.columns)
        return (f"CREATE TABLE {self.name} ({cols}) DUPLICATE KEY({self.columns[0][0]}) "
                f"DISTRIBUTED BY HASH({self.columns[0][0]}) BUCKETS {buckets} "
                f"PROPERTIES (\"replication_num\" = \"1\")")

    def duckdb_ddl(self) -> str:
        cols = ", ".join(f"{n} {'INTEGER' if t == INT else 'VARCHAR'}" for n, t in self.columns)
        return f"CREATE TABLE {self.name} ({cols})"

    def insert(self) -> str | None:
        if not self.rows:
            return None
        values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in self.rows)
        return f"INSERT INTO {self.name} VALUES {values}"


def _literal(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v + "'"
    return str(v)


def make_tables(rng: random.Random, count: int = 3) -> list[Table]:
    tables = []
    for i in range(count):
        ncols = rng.randint(3, 5)
        cols = [("k", INT)] + [(f"c{j}", rng.choice([INT, INT, STR])) for j in range(1, ncols)]
        t = Table(f"t{i}", cols)
        for _ in range(rng.choice([0, 1, 3, 8, 12, 20])):
            t.rows.append(tuple(_value(rng, typ) for _, typ in cols))
        tables.append(t)
    return tables


def _value(rng: random.Random, typ: str):
    if rng.random() < 0.25:
        return None
    return rng.randint(-5, 9) if typ == INT else rng.choice(WORDS)


@dataclass
class Source:
    """A table visible in a FROM clause under an alias."""

    alias: str
    table: Table

    def columns(self, typ: str | None = None) -> list[str]:
        return [f"{self.alias}.{n}" for n, t in self.table.columns if typ is None or t == typ]


class Grouped(Source):
    """A grouping column of an aggregating SELECT: all a subquery of it may read."""

    def __init__(self, alias: str, table: Table, column: str):
        super().__init__(alias, table)
        self.column = column

    def columns(self, typ: str | None = None) -> list[str]:
        name = self.column.split(".")[1]
        return [self.column] if any(n == name and (typ is None or t == typ)
                                    for n, t in self.table.columns) else []


class QueryGen:
    """Random SELECTs over `tables`; `depth` bounds subquery nesting."""

    def __init__(self, rng: random.Random, tables: list[Table]):
        self.rng = rng
        self.tables = tables
        self.aliases = 0

    def _alias(self) -> str:
        self.aliases += 1
        return f"r{self.aliases}"

    # -- expressions -------------------------------------------------------------------------
    def expr(self, typ: str, scope: list[Source], outer: list[Source], depth: int) -> str:
        r = self.rng.random()
        if typ == BOOL:
            return self.predicate(scope, outer, depth)
        cols = [c for s in scope for c in s.columns(typ)]
        outer_cols = [c for s in outer for c in s.columns(typ)]
        if depth <= 0 or r < 0.35:
            if cols and r < 0.25:
                return self.rng.choice(cols)
            if outer_cols and r < 0.3:
                return self.rng.choice(outer_cols)
            return self._constant(typ)
        if typ == STR:
            k = self.rng.randrange(5)
            if k == 0:
                return f"UPPER({self.expr(STR, scope, outer, depth - 1)})"
            if k == 1:
                return f"COALESCE({self.expr(STR, scope, outer, depth - 1)}, " \
                       f"{self.expr(STR, scope, outer, depth - 1)})"
            if k == 2:
                return (f"CASE WHEN {self.predicate(scope, outer, depth - 1)} THEN "
                        f"{self.expr(STR, scope, outer, depth - 1)} ELSE "
                        f"{self.expr(STR, scope, outer, depth - 1)} END")
            return self.rng.choice(cols) if cols else self._constant(STR)
        k = self.rng.randrange(11)
        a = lambda: self.expr(INT, scope, outer, depth - 1)  # noqa: E731
        if k <= 2:
            return f"({a()} {self.rng.choice(['+', '-', '*'])} {a()})"
        if k == 3:
            return f"({a()} % {self.rng.choice([2, 3, -4])})"
        if k == 4:
            return f"ABS({a()})"
        if k == 5:
            return f"COALESCE({a()}, {a()})"
        if k == 6:
            return f"CASE WHEN {self.predicate(scope, outer, depth - 1)} THEN {a()} ELSE {a()} END"
        if k == 7:
            return f"(-({a()}))"
        if k == 8 and self.rng.random() < 0.5:
            return f"LENGTH({self.expr(STR, scope, outer, depth - 1)})"
        if k >= 9 and depth >= 2:
            return self.scalar_subquery(scope + outer, depth - 1)
        return self.rng.choice(cols) if cols else self._constant(INT)

    def _constant(self, typ: str) -> str:
        if self.rng.random() < 0.08:
            return "NULL"
        return str(self.rng.randint(-3, 8)) if typ == INT else f"'{self.rng.choice(WORDS)}'"

    def predicate(self, scope: list[Source], outer: list[Source], depth: int) -> str:
        k = self.rng.randrange(14)
        typ = self.rng.choice([INT, INT, STR])
        e = lambda t=typ: self.expr(t, scope, outer, depth - 1)  # noqa: E731
        if depth <= 0 or k <= 3:
            op = self.rng.choice(["=", "<>", "<", "<=", ">", ">=", "<=>"])
            return f"({e()} {op} {e()})"
        if k == 4:
            return f"({e()} IS {'NOT ' if self.rng.random() < 0.5 else ''}NULL)"
        if k == 5:
            return f"({self.predicate(scope, outer, depth - 1)} " \
                   f"{self.rng.choice(['AND', 'OR'])} {self.predicate(scope, outer, depth - 1)})"
        if k == 6:
            return f"(NOT {self.predicate(scope, outer, depth - 1)})"
        if k == 7:
            items = ", ".join(self._constant(typ) for _ in range(self.rng.randint(1, 4)))
            return f"({e()} {'NOT ' if self.rng.random() < 0.3 else ''}IN ({items}))"
        if k == 8:
            return f"({e(INT)} BETWEEN {e(INT)} AND {e(INT)})"
        if k == 9:
            return f"({e(STR)} LIKE '{self.rng.choice(['a%', '%b', '_', '%', 'ab'])}')"
        if depth < 2:
            return f"({e()} = {e()})"
        return self.subquery_predicate(scope + outer, depth - 1)

    # -- subqueries ------------------------------------------------------------------------
    def _inner(self, outer: list[Source], depth: int) -> tuple[list[Source], str, str]:
        """FROM and WHERE of a subquery over one or two tables, maybe correlated."""
        src = [Source(self._alias(), self.rng.choice(self.tables))]
        from_ = f"{src[0].table.name} AS {src[0].alias}"
        if self.rng.random() < 0.2:
            src.append(Source(self._alias(), self.rng.choice(self.tables)))
            from_ += f" JOIN {src[1].table.name} AS {src[1].alias} ON " \
                     f"{src[0].alias}.k = {src[1].alias}.k"
        conds = []
        if outer and self.rng.random() < 0.75:
            o = self.rng.choice(outer)
            op = self.rng.choice(["=", "=", "<", ">", "<>", "<=", ">="])
            col_typ = self.rng.choice([INT, INT, STR])
            icols, ocols = src[0].columns(col_typ), o.columns(col_typ)
            if icols and ocols:
                conds.append(f"{self.rng.choice(icols)} {op} {self.rng.choice(ocols)}")
        if self.rng.random() < 0.5:
            conds.append(self.predicate(src, outer, depth - 1))
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return src, from_, where

    def scalar_subquery(self, outer: list[Source], depth: int) -> str:
        src, from_, where = self._inner(outer, depth)
        arg = self.expr(INT, src, [], 1)
        agg = self.rng.choice([f"COUNT(*)", f"COUNT({arg})", f"SUM({arg})", f"MIN({arg})",
                               f"MAX({arg})"])
        return f"(SELECT {agg} FROM {from_}{where})"

    def subquery_predicate(self, outer: list[Source], depth: int) -> str:
        src, from_, where = self._inner(outer, depth)
        k = self.rng.randrange(5)
        if k == 0:
            neg = "NOT " if self.rng.random() < 0.4 else ""
            return f"({neg}EXISTS (SELECT 1 FROM {from_}{where}))"
        typ = self.rng.choice([INT, INT, STR])
        inner_cols = [c for s in src for c in s.columns(typ)]
        outer_cols = [c for s in outer for c in s.columns(typ)]
        if not inner_cols:
            return f"(EXISTS (SELECT 1 FROM {from_}{where}))"
        left = self.rng.choice(outer_cols) if outer_cols and self.rng.random() < 0.8 \
            else self._constant(typ)
        item = self.rng.choice(inner_cols)
        if k <= 2:
            neg = "NOT " if self.rng.random() < 0.4 else ""
            return f"({left} {neg}IN (SELECT {item} FROM {from_}{where}))"
        op = self.rng.choice(["=", "<>", "<", ">", "<=", ">="])
        quant = self.rng.choice(["ANY", "SOME", "ALL"])
        return f"({left} {op} {quant} (SELECT {item} FROM {from_}{where}))"

    # -- whole queries ---------------------------------------------------------------------------
    def from_clause(self) -> tuple[list[Source], str]:
        src = [Source(self._alias(), self.rng.choice(self.tables))]
        text = f"{src[0].table.name} AS {src[0].alias}"
        for _ in range(self.rng.choice([0, 0, 1, 1, 2])):
            s = Source(self._alias(), self.rng.choice(self.tables))
            kind = self.rng.choice(["JOIN", "LEFT JOIN", "CROSS JOIN", ","])
            prev = self.rng.choice(src)
            on = f"{prev.alias}.k = {s.alias}.k"
            if self.rng.random() < 0.3:
                on += f" AND {self.predicate([prev, s], [], 1)}"
            if kind == ",":
                text += f", {s.table.name} AS {s.alias}"
            elif kind == "CROSS JOIN":
                text += f" CROSS JOIN {s.table.name} AS {s.alias}"
            elif self.rng.random() < 0.15 and len(src) == 1:
                text += f" {kind} {s.table.name} AS {s.alias} USING (k)"
            else:
                text += f" {kind} {s.table.name} AS {s.alias} ON {on}"
            src.append(s)
        if len(src) > 1 and "," not in text and self.rng.random() < 0.2:
            text = f"({text})"  # a parenthesized join, not a derived table
        return src, text

    def select(self, where: bool = True) -> tuple[str, list[Source], str]:
        """A plain SELECT (without WHERE and DISTINCT unless `where`); also returns its sources
        and FROM text (for the TLP oracle)."""
        src, from_ = self.from_clause()
        n = self.rng.randint(1, 3)
        items = [self.expr(self.rng.choice([INT, INT, STR, BOOL]), src, [], 3) for _ in range(n)]
        where = f" WHERE {self.predicate(src, [], 3)}" if where and self.rng.random() < 0.7 else ""
        distinct = "DISTINCT " if where and self.rng.random() < 0.1 else ""
        return f"SELECT {distinct}{', '.join(items)} FROM {from_}{where}", src, from_

    def aggregate(self) -> str:
        src, from_ = self.from_clause()
        keys = [self.expr(self.rng.choice([INT, STR]), src, [], 1)
                for _ in range(self.rng.randint(0, 2))]
        arg = lambda: self.expr(INT, src, [], 2)  # noqa: E731
        aggs = [self.rng.choice(["COUNT(*)", f"COUNT({arg()})", f"SUM({arg()})",
                                 f"MIN({arg()})", f"MAX({arg()})",
                                 f"COUNT(DISTINCT {arg()})"])
                for _ in range(self.rng.randint(1, 3))]
        where = f" WHERE {self.predicate(src, [], 2)}" if self.rng.random() < 0.5 else ""
        key_cols = [k for k in keys if "." in k and k.replace(".", "").isalnum()]
        if key_cols and self.rng.random() < 0.3:
            # A subquery correlated with a grouping column, in the select list.
            keys_src = [Grouped(k.split(".")[0], next(s.table for s in src
                                                      if s.alias == k.split(".")[0]), k)
                        for k in key_cols[:1]]
            having_aggs = list(aggs)
            aggs.append(self.scalar_subquery(keys_src, 1) if self.rng.random() < 0.5
                        else self.subquery_predicate(keys_src, 1))
        else:
            having_aggs = aggs
        sql = f"SELECT {', '.join(keys + aggs)} FROM {from_}{where}"
        if keys:
            sql += f" GROUP BY {', '.join(keys)}"
            if self.rng.random() < 0.4:
                sql += f" HAVING {self.rng.choice(having_aggs)} {self.rng.choice(['>', '<', '='])} " \
                       f"{self.rng.randint(0, 4)}"
        return sql

    def predicate_only(self, src: list[Source]) -> str:
        return self.predicate(src, [], 3)
