"""Golden SQL scripts: parse a `.test` file, run it through the wire, compare, regenerate.

A script is a sequence of records separated by blank lines. Lines starting with `#` between
records are comments. Each record starts with a directive line, then the SQL (one statement, one
or more lines; a trailing `;` is dropped), then optionally `----` and the expected output, up to
the next blank line:

    statement ok                      the statement succeeds
    statement ok                      ... and reports this many affected rows
    INSERT INTO t VALUES (1), (2)
    ----
    affected 2

    statement error                   it fails (any error)
    statement error 1049              it fails with this MySQL error number
    statement error 1049 Unknown database 'x'
                                      ... and the message contains this text

    query                             a result set: a header line with the column names, then
    SELECT k, v FROM t ORDER BY k     one line per row, values tab-separated exactly as
    ----                              `mysql --batch` prints them: NULL as NULL, values as the
    k	v                             server's text protocol sends them; tab, newline, backslash
    1	a                             and NUL escaped as \\t \\n \\\\ \\0
    2	NULL

    query rowsort                     same, rows compared as sorted lists (header stays first)
    query contains                    each expected line must occur, in order, as a substring of
                                      a line of the output (raw values, not escaped; multi-line
                                      values split into lines; surrounding whitespace ignored)
    explain                           the statement returns one column; its values, split into
                                      lines, must equal the expected lines (no header)
    explain contains                  each expected line must occur, in order, as a substring of
                                      a plan line

Comparison ignores trailing whitespace on each line; an output line that is empty is written
`(empty)` (a blank line would end the record). Any other directive or option is an error.

Each script runs on one PyMySQL connection in its own database `test_<name>` (created fresh,
selected with USE, dropped afterwards). With MINIDORIS_REGENERATE=1 the expected outputs of
`query`, `explain`, `statement ok ... affected` and `statement error` records that differ are
rewritten in place from the actual results, for review with `git diff`; `contains` records and
records whose outcome differs (success vs. error) are never rewritten and still fail.

Run directly against a server you started:  python tests/sql/runner.py --port 9030 tests/sql/*.test
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pymysql

REGENERATE_ENV = "MINIDORIS_REGENERATE"
SEPARATOR = "----"
EMPTY_LINE = "(empty)"
CLIENT_ERROR_MIN = 2000  # CR_* client-side errors (lost connection, ...): not a server answer
CLIENT_ERROR_MAX = 2999  # Doris sends its own numbers above (5065-5083 for partitions)

DIRECTIVE_OPTIONS = {
    "statement": ("ok", "error"),
    "query": ("", "rowsort", "contains"),
    "explain": ("", "contains"),
}


class SetupError(Exception):
    """The runner could not create or select the script's database."""


class ScriptError(Exception):
    """The script itself is malformed."""

    def __init__(self, path: str | Path, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")


# ---- records ---------------------------------------------------------------------------------


@dataclass
class Record:
    kind: str  # "statement" | "query" | "explain"
    mode: str  # statement: "ok" | "error"; query: "" | "rowsort" | "contains"; explain: "" | "contains"
    line: int  # 1-based line of the directive
    sql: str
    sql_end: int  # 0-based index of the line after the SQL
    errno: int | None = None  # statement error
    message: str | None = None  # statement error: expected substring
    affected: int | None = None  # statement ok with `affected N`
    expected: list[str] | None = None  # query / explain lines (None: no ---- block)
    block: tuple[int, int] | None = None  # 0-based [start, end) of the lines after ----

    @property
    def directive(self) -> str:
        if self.kind == "statement" and self.mode == "error":
            parts = ["statement", "error"]
            if self.errno is not None:
                parts.append(str(self.errno))
            if self.message:
                parts.append(self.message)
            return " ".join(parts)
        return " ".join(p for p in (self.kind, self.mode) if p)


def parse(text: str, path: str | Path = "<script>") -> list[Record]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    records: list[Record] = []
    i = 0
    n = len(lines)
    while i < n:
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        record = _parse_directive(raw, i + 1, path)
        i += 1
        sql_lines = []
        while i < n and lines[i].strip() and lines[i].rstrip() != SEPARATOR:
            sql_lines.append(lines[i])
            i += 1
        if not sql_lines:
            raise ScriptError(path, record.line, f"`{stripped}` has no SQL after it")
        record.sql = _clean_sql("\n".join(sql_lines))
        record.sql_end = i
        if i < n and lines[i].rstrip() == SEPARATOR:
            i += 1
            start = i
            while i < n and lines[i].strip():
                i += 1
            record.block = (start, i)
            _parse_block(record, lines[start:i], start + 1, path)
        records.append(record)
    return records


def _parse_directive(raw: str, lineno: int, path) -> Record:
    words = raw.split()
    kind = words[0]
    if kind not in DIRECTIVE_OPTIONS:
        raise ScriptError(path, lineno, f"unknown directive {kind!r} (expected statement, query or explain)")
    if kind == "statement":
        if len(words) < 2 or words[1] not in ("ok", "error"):
            raise ScriptError(path, lineno, "expected `statement ok` or `statement error [errno [message]]`")
        if words[1] == "ok":
            if len(words) > 2:
                raise ScriptError(path, lineno, f"unexpected text after `statement ok`: {' '.join(words[2:])!r}")
            return Record("statement", "ok", lineno, "", 0)
        rest = raw.strip().split(None, 3)[2:]
        errno = message = None
        if rest:
            if not rest[0].isdigit():
                raise ScriptError(path, lineno, f"error number must be an integer, got {rest[0]!r}")
            errno = int(rest[0])
            if len(rest) > 1:
                message = rest[1].rstrip()
        return Record("statement", "error", lineno, "", 0, errno=errno, message=message)
    mode = words[1] if len(words) > 1 else ""
    if mode not in DIRECTIVE_OPTIONS[kind] or len(words) > 2:
        allowed = ", ".join(repr(o) for o in DIRECTIVE_OPTIONS[kind] if o)
        raise ScriptError(path, lineno, f"unknown option for {kind}: {' '.join(words[1:])!r} (allowed: {allowed})")
    return Record(kind, mode, lineno, "", 0)


def _parse_block(record: Record, block: list[str], first_lineno: int, path) -> None:
    if record.kind == "statement":
        if record.mode == "error":
            raise ScriptError(path, first_lineno - 1, "`statement error` takes no ---- block")
        m = re.fullmatch(r"affected (\d+)", block[0].strip()) if len(block) == 1 else None
        if not m:
            raise ScriptError(path, first_lineno, "after `statement ok` the ---- block must be one line `affected N`")
        record.affected = int(m.group(1))
        return
    record.expected = [_normalize(line) for line in block]
    if record.mode == "contains" and not record.expected:
        raise ScriptError(path, first_lineno, f"`{record.directive}` needs at least one expected line")


def _clean_sql(sql: str) -> str:
    sql = sql.strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return sql


def _normalize(line: str) -> str:
    line = line.rstrip()
    return line if line else EMPTY_LINE


# ---- rendering results like `mysql --batch` --------------------------------------------------

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\0": "\\0"})


def text_value(value) -> str | None:
    """A value as the text protocol sent it (the connection returns raw bytes)."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    return str(value)


def batch_cell(value) -> str:
    text = text_value(value)
    return "NULL" if text is None else text.translate(_ESCAPES)


def render_rows(names: list[str], rows: list[tuple]) -> tuple[str, list[str]]:
    header = "\t".join(name.translate(_ESCAPES) for name in names)
    return _normalize(header), [_normalize("\t".join(batch_cell(v) for v in row)) for row in rows]


def raw_lines(names: list[str], rows: list[tuple]) -> list[str]:
    """Output for `contains`: values unescaped, multi-line values split into lines."""
    def cell(v) -> str:
        t = text_value(v)
        return "NULL" if t is None else t

    text = "\n".join(["\t".join(names)] + ["\t".join(cell(v) for v in row) for row in rows])
    return text.split("\n")


def contains_in_order(expected: list[str], actual: list[str]) -> str | None:
    """None if every expected line is a substring of a later actual line; else the first missing one."""
    pos = 0
    for want in expected:
        want = want.strip()
        while pos < len(actual) and want not in actual[pos].strip():
            pos += 1
        if pos == len(actual):
            return want
        pos += 1
    return None


# ---- running ---------------------------------------------------------------------------------


@dataclass
class Failure:
    record: Record
    message: str
    replacement: list[str] | None = None  # new expected block, for regeneration
    new_directive: str | None = None  # new directive line, for regeneration


@dataclass
class Outcome:
    names: list[str] | None = None  # None: no result set
    rows: list[tuple] = field(default_factory=list)
    affected: int = 0
    errno: int | None = None
    error: str | None = None


@dataclass
class ScriptResult:
    path: Path
    failures: list[Failure]
    regenerated: int = 0

    def report(self) -> str:
        parts = [f"{self.path}: {len(self.failures)} failing record(s)"]
        for f in self.failures:
            parts.append(f"\n{self.path}:{f.record.line}: {f.record.directive}\n{_indent(f.record.sql)}\n{f.message}")
        return "\n".join(parts)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


def database_name(path: Path) -> str:
    return "test_" + re.sub(r"[^0-9A-Za-z_]", "_", path.stem)


# Keep PyMySQL's encoders (it escapes its own `SET AUTOCOMMIT` argument) but drop every decoder.
ENCODERS_ONLY = {k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)}


def connect(host: str, port: int) -> pymysql.connections.Connection:
    """One connection that hands back the raw bytes of every value (no type conversion)."""
    return pymysql.connect(
        host=host,
        port=port,
        user="root",
        password="",
        autocommit=True,
        charset="utf8mb4",
        use_unicode=False,
        conv=ENCODERS_ONLY,
        connect_timeout=10,
        read_timeout=120,
        write_timeout=120,
    )


class Session:
    """The script's connection; reconnects (and re-selects the database) after a lost connection."""

    def __init__(self, host: str, port: int, db: str):
        self.host, self.port, self.db = host, port, db
        self.conn = connect(host, port)

    def run(self, sql: str) -> Outcome:
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
                if cur.description is None:
                    return Outcome(affected=max(cur.rowcount, 0))
                names = [_decode(d[0]) for d in cur.description]
                return Outcome(names=names, rows=list(cur.fetchall()), affected=max(cur.rowcount, 0))
        except pymysql.err.MySQLError as e:
            errno, msg = _error_parts(e)
            if _client_side(errno):
                self._reconnect()
            return Outcome(errno=errno, error=msg)
        except Exception as e:  # a malformed answer: report it as a failure and go on
            self._reconnect()
            return Outcome(errno=-1, error=f"client exception {type(e).__name__}: {e}")

    def _reconnect(self) -> None:
        try:
            self.conn.close()
        except Exception:  # the connection is already broken
            pass
        try:
            self.conn = connect(self.host, self.port)
            with self.conn.cursor() as cur:
                cur.execute(f"USE `{self.db}`")
        except pymysql.err.MySQLError:
            pass  # the next statement reports the broken connection again

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a dead connection
            pass


def _client_side(errno: int) -> bool:
    """Errors raised by the client library (lost connection, bad packet), not sent by the server."""
    return errno <= 0 or CLIENT_ERROR_MIN <= errno <= CLIENT_ERROR_MAX


def _decode(value) -> str:
    return value.decode("utf-8", errors="backslashreplace") if isinstance(value, bytes) else str(value)


def _error_parts(e: pymysql.err.MySQLError) -> tuple[int, str]:
    args = e.args
    if len(args) >= 2 and isinstance(args[0], int):
        return args[0], _decode(args[1])
    return 0, " ".join(_decode(a) for a in args) or type(e).__name__


def check(record: Record, out: Outcome, regenerate: bool) -> Failure | None:
    if record.kind == "statement":
        return _check_statement(record, out)
    if out.errno is not None:
        return Failure(record, f"expected a result set, got error {out.errno}: {out.error}")
    if out.names is None:
        return Failure(record, "expected a result set, got an OK packet (no columns)")
    if record.expected is None and not regenerate:
        return Failure(record, f"no expected output (---- block); run with {REGENERATE_ENV}=1 to fill it in")
    if record.kind == "query":
        return _check_query(record, out)
    return _check_explain(record, out)


def _check_statement(record: Record, out: Outcome) -> Failure | None:
    if record.mode == "ok":
        if out.errno is not None:
            return Failure(record, f"expected success, got error {out.errno}: {out.error}")
        if record.affected is not None and out.affected != record.affected:
            return Failure(
                record,
                f"expected affected {record.affected}, got affected {out.affected}",
                replacement=[f"affected {out.affected}"],
            )
        return None
    if out.errno is None:
        return Failure(record, "expected an error, but the statement succeeded")
    if _client_side(out.errno):
        return Failure(record, f"expected an error from the server, got a client-side error {out.errno}: {out.error}")
    actual = f"statement error {out.errno} {out.error}"
    if record.errno is not None and out.errno != record.errno:
        return Failure(record, f"expected error {record.errno}, got error {out.errno}: {out.error}", new_directive=actual)
    if record.message and record.message not in out.error:
        return Failure(
            record,
            f"error message does not contain the expected text\n  expected substring: {record.message}\n"
            f"  actual message:     {out.error}",
            new_directive=actual,
        )
    return None


def _check_query(record: Record, out: Outcome) -> Failure | None:
    if record.mode == "contains":
        missing = contains_in_order(record.expected, raw_lines(out.names, out.rows))
        if missing is None:
            return None
        shown = _indent("\n".join(raw_lines(out.names, out.rows)))
        return Failure(record, f"output does not contain (in order) the line:\n    {missing}\nactual output:\n{shown}")
    header, rows = render_rows(out.names, out.rows)
    expected = list(record.expected or [])
    if record.mode == "rowsort":
        rows = sorted(rows)
        expected = expected[:1] + sorted(expected[1:])
    actual = [header] + rows
    if actual == expected:
        return None
    return Failure(record, _diff(expected, actual), replacement=actual)


def _check_explain(record: Record, out: Outcome) -> Failure | None:
    if len(out.names) != 1:
        return Failure(record, f"EXPLAIN must return one column, got {len(out.names)}: {out.names}")
    lines = []
    for row in out.rows:
        lines.extend(("NULL" if row[0] is None else text_value(row[0])).split("\n"))
    if record.mode == "contains":
        missing = contains_in_order(record.expected, lines)
        if missing is None:
            return None
        return Failure(record, f"plan does not contain (in order) the line:\n    {missing}\nactual plan:\n{_indent(chr(10).join(lines))}")
    actual = [_normalize(line) for line in lines]
    if actual == record.expected:
        return None
    return Failure(record, _diff(record.expected or [], actual), replacement=actual)


def _diff(expected: list[str], actual: list[str]) -> str:
    diff = difflib.unified_diff(expected, actual, "expected", "actual", lineterm="", n=3)
    return "\n".join(_indent(line) for line in diff)


# functions whose value the query itself changes (a second run sees the first one's rows)
_SESSION_STATE = re.compile(r"found_rows|row_count|last_insert_id|last_query_id", re.IGNORECASE)


def run_script(
    path: Path, host: str, port: int, regenerate: bool | None = None, session_factory=Session,
    repeat_queries: bool = False,
) -> ScriptResult:
    """Run one script in a fresh database; rewrite it in place if regenerating.

    `session_factory(host, port, db)` makes the object that runs statements (tests pass a fake).
    `repeat_queries`: every query runs twice and both results must match, the second from the
    server's kept plan (server/handlers/plan_cache.py).
    """
    path = Path(path)
    if regenerate is None:
        regenerate = os.environ.get(REGENERATE_ENV) == "1"
    text = path.read_text(encoding="utf-8")
    records = parse(text, path)
    db = database_name(path)
    session = session_factory(host, port, db)
    failures: list[Failure] = []
    try:
        for setup in (f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}`", f"USE `{db}`"):
            out = session.run(setup)
            if out.errno is not None:
                raise SetupError(f"{path}: runner setup `{setup}` failed: {out.errno} {out.error}")
        for record in records:
            failure = check(record, session.run(record.sql), regenerate)
            if failure is None and repeat_queries and record.kind == "query" and \
                    not _SESSION_STATE.search(record.sql):
                failure = check(record, session.run(record.sql), False)
                if failure is not None:
                    failure.message = "on its second run: " + failure.message
            if failure:
                failures.append(failure)
    finally:
        session.run(f"DROP DATABASE IF EXISTS `{db}`")
        session.close()
    result = ScriptResult(path, failures)
    if regenerate:
        result.failures, result.regenerated = _regenerate(path, text, failures)
    return result


def _regenerate(path: Path, text: str, failures: list[Failure]) -> tuple[list[Failure], int]:
    """Apply the rewritable failures to the file; return the ones that remain, and the count fixed."""
    lines = text.split("\n")
    remaining, fixes = [], []
    for f in failures:
        if f.replacement is not None or f.new_directive is not None:
            fixes.append(f)
        else:
            remaining.append(f)
    # Edit from the bottom so that earlier line numbers stay valid.
    for f in sorted(fixes, key=lambda f: f.record.line, reverse=True):
        rec = f.record
        if f.replacement is not None:
            if rec.block is not None:
                lines[rec.block[0]:rec.block[1]] = f.replacement
            else:
                lines[rec.sql_end:rec.sql_end] = [SEPARATOR] + f.replacement
        if f.new_directive is not None:
            lines[rec.line - 1] = f.new_directive
    new_text = "\n".join(lines)
    if new_text != text:
        path.write_text(new_text, encoding="utf-8")
    return remaining, len(fixes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run minidoris golden SQL scripts against a running server.")
    ap.add_argument("scripts", nargs="+", type=Path)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9030)
    ap.add_argument("--regenerate", action="store_true", help=f"same as {REGENERATE_ENV}=1")
    args = ap.parse_args(argv)
    bad = 0
    for path in args.scripts:
        result = run_script(path, args.host, args.port, regenerate=args.regenerate or None)
        if result.regenerated:
            print(f"{path}: rewrote {result.regenerated} record(s)")
        if result.failures:
            bad += 1
            print(result.report(), end="\n\n")
        else:
            print(f"{path}: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
