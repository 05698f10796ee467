"""The differential SQL fuzzer: random queries (tests/fuzz/fuzz_generator.py) against the server,
checked by three oracles.

- DuckDB: the same tables loaded into DuckDB, the same query; the results must be equal as
  multisets (numbers compared after rounding, booleans as 1/0). The generator keeps to SQL
  whose semantics agree (see its docstring); a query DuckDB rejects is skipped.
- TLP (ternary logic partitioning, SQLancer): for a random predicate p, `Q` must equal
  `Q WHERE p UNION ALL Q WHERE NOT p UNION ALL Q WHERE p IS NULL` - on the server alone.
- NoREC (SQLancer): `SELECT count(*) FROM .. WHERE p` must equal
  `SELECT SUM(CASE WHEN p THEN 1 ELSE 0 END) FROM ..` - the optimised filter against the
  predicate evaluated per row - on the server alone.

Any server error on a query DuckDB runs is a finding too (an unsupported construct or a bug).
`run(seed, count, conn)` returns a Report; scripts/fuzz_sql.py runs it for long.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal

import duckdb

from fuzz_generator import QueryGen, make_tables


@dataclass
class Finding:
    oracle: str
    sql: str
    detail: str


@dataclass
class Report:
    queries: int = 0            # statements sent to the server
    checks: int = 0             # oracle checks done
    skipped: int = 0            # DuckDB rejected the query
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0


def _norm_value(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float, Decimal)):
        f = float(v)
        return round(f, 4) if f != int(f) else int(f)
    if isinstance(v, bytes):
        return v.decode()
    return str(v)


def _norm(rows) -> list[tuple]:
    return sorted((tuple(_norm_value(v) for v in r) for r in rows), key=repr)


def to_duckdb(sql: str) -> str:
    return sql.replace("<=>", "IS NOT DISTINCT FROM")


class Fuzzer:
    def __init__(self, conn, seed: int, db: str):
        self.conn = conn
        self.rng = random.Random(seed)
        self.db = db
        self.report = Report()
        self.duck = duckdb.connect()

    # -- setup ---------------------------------------------------------------------------------
    def setup(self) -> QueryGen:
        tables = make_tables(self.rng, self.rng.randint(2, 3))
        cur = self.conn.cursor()
        cur.execute(f"DROP DATABASE IF EXISTS {self.db}")
        cur.execute(f"CREATE DATABASE {self.db}")
        cur.execute(f"USE {self.db}")
        for t in tables:
            cur.execute(t.doris_ddl(self.rng.randint(1, 3)))
            self.duck.execute(f"DROP TABLE IF EXISTS {t.name}")
            self.duck.execute(t.duckdb_ddl())
            insert = t.insert()
            if insert:
                cur.execute(insert)
                self.duck.execute(insert)
        return QueryGen(self.rng, tables)

    # -- running ---------------------------------------------------------------------------------
    def server(self, sql: str):
        self.report.queries += 1
        cur = self.conn.cursor()
        cur.execute(sql)
        return cur.fetchall()

    def check_duckdb(self, sql: str) -> None:
        try:
            expected = _norm(self.duck.execute(to_duckdb(sql)).fetchall())
        except duckdb.Error:
            self.report.skipped += 1
            return
        self.report.checks += 1
        try:
            got = _norm(self.server(sql))
        except Exception as e:  # noqa: BLE001 - every server error is a finding
            self._find("duckdb", sql, f"server error {e}")
            return
        if got != expected:
            self._find("duckdb", sql, f"server {got[:8]} != duckdb {expected[:8]}")

    def check_tlp(self, gen: QueryGen) -> None:
        base, src, from_ = gen.select(where=False)
        p = gen.predicate_only(src)
        parts = [f"{base} WHERE {p}", f"{base} WHERE NOT {p}", f"{base} WHERE ({p}) IS NULL"]
        self.report.checks += 1
        try:
            whole = _norm(self.server(base))
            pieces = _norm([r for q in parts for r in self.server(q)])
        except Exception as e:  # noqa: BLE001
            self._find("tlp", parts[0], f"server error {e}")
            return
        if whole != pieces:
            self._find("tlp", f"{base} /* p = {p} */", f"{len(whole)} rows != {len(pieces)}")

    def check_norec(self, gen: QueryGen) -> None:
        src, from_ = gen.from_clause()
        p = gen.predicate_only(src)
        optimised = f"SELECT COUNT(*) FROM {from_} WHERE {p}"
        plain = f"SELECT SUM(CASE WHEN {p} THEN 1 ELSE 0 END) FROM {from_}"
        self.report.checks += 1
        try:
            a = self.server(optimised)[0][0]
            b = self.server(plain)[0][0] or 0
        except Exception as e:  # noqa: BLE001
            self._find("norec", optimised, f"server error {e}")
            return
        if int(a) != int(b):
            self._find("norec", optimised, f"count {a} != per-row {b}")

    def _find(self, oracle: str, sql: str, detail: str) -> None:
        self.report.findings.append(Finding(oracle, sql, detail))

    def run(self, count: int, queries_per_setup: int = 200) -> Report:
        start = time.monotonic()
        gen = None
        done = 0
        while done < count:
            if done % queries_per_setup == 0:
                gen = self.setup()
            k = self.rng.random()
            if k < 0.55:
                self.check_duckdb(gen.select()[0])
            elif k < 0.75:
                self.check_duckdb(gen.aggregate())
            elif k < 0.88:
                self.check_tlp(gen)
            else:
                self.check_norec(gen)
            done += 1
        self.report.seconds = time.monotonic() - start
        return self.report


def summary(report: Report, limit: int = 20) -> str:
    lines = [f"{report.checks} checks, {report.queries} server queries, {report.skipped} skipped "
             f"(DuckDB rejected), {len(report.findings)} findings, {report.seconds:.0f} s"]
    seen = set()
    for f in report.findings:
        key = (f.oracle, re.sub(r"\d+", "N", f.detail)[:60])
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"[{f.oracle}] {f.sql}\n    {f.detail[:300]}")
        if len(seen) >= limit:
            break
    return "\n".join(lines)
