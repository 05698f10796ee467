"""The golden-script runner itself, checked without a server: parsing, rendering, comparison,
regeneration. A fake session answers statements from a table of canned outcomes."""

from __future__ import annotations

import textwrap

import pytest

import runner
from runner import Outcome, ScriptError, parse


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ---- parsing ---------------------------------------------------------------------------------


def test_parse_all_directives():
    records = parse(dedent("""
        # a comment
        statement ok
        CREATE DATABASE d

        statement ok
        INSERT INTO t VALUES (1),
          (2);
        ----
        affected 2

        statement error
        SELEC 1

        statement error 1049
        USE nope

        statement error 1105 errCode = 2, detailMessage = Unknown database 'nope'
        USE nope

        query
        SELECT k, v FROM t ORDER BY k
        ----
        k\tv
        1\ta
        2\tNULL

        query rowsort
        SELECT 1
        ----
        1
        1

        query contains
        SHOW CREATE TABLE t
        ----
          AGGREGATE KEY(`k`)

        explain
        EXPLAIN SELECT 1
        ----
        PLAN FRAGMENT 0

        explain contains
        EXPLAIN SELECT 1
        ----
        VUNION
        """))
    kinds = [(r.kind, r.mode) for r in records]
    assert kinds == [
        ("statement", "ok"), ("statement", "ok"), ("statement", "error"), ("statement", "error"),
        ("statement", "error"), ("query", ""), ("query", "rowsort"), ("query", "contains"),
        ("explain", ""), ("explain", "contains"),
    ]
    create, insert, anyerr, errno_only, full, query, rowsort, contains, explain, _ = records
    assert create.line == 2 and create.sql == "CREATE DATABASE d" and create.affected is None
    assert insert.sql == "INSERT INTO t VALUES (1),\n  (2)" and insert.affected == 2
    assert (anyerr.errno, anyerr.message) == (None, None)
    assert (errno_only.errno, errno_only.message) == (1049, None)
    assert full.errno == 1105 and full.message == "errCode = 2, detailMessage = Unknown database 'nope'"
    assert query.expected == ["k\tv", "1\ta", "2\tNULL"]
    assert rowsort.expected == ["1", "1"]
    assert contains.expected == ["  AGGREGATE KEY(`k`)"]
    assert explain.expected == ["PLAN FRAGMENT 0"]


def test_query_without_block_has_no_expected_output():
    (rec,) = parse("query\nSELECT 1\n")
    assert rec.expected is None and rec.block is None


def test_whitespace_only_line_ends_a_record():
    recs = parse("query\nSELECT 1\n----\n1\n  \t\nstatement ok\nSELECT 2\n")
    assert [r.kind for r in recs] == ["query", "statement"]
    assert recs[0].expected == ["1"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("statment ok\nSELECT 1\n", "unknown directive 'statment'"),
        ("control sortmode rowsort\n", "unknown directive 'control'"),
        ("query sorted\nSELECT 1\n", "unknown option for query"),
        ("explain rowsort\nEXPLAIN SELECT 1\n", "unknown option for explain"),
        ("statement maybe\nSELECT 1\n", "expected `statement ok`"),
        ("statement ok please\nSELECT 1\n", "unexpected text after `statement ok`"),
        ("statement error ERR_X oops\nSELECT 1\n", "error number must be an integer"),
        ("statement ok\n\nSELECT 1\n", "has no SQL"),
        ("statement ok\nSELECT 1\n----\n3 rows\n", "affected N"),
        ("statement error 1064\nSELEC 1\n----\nx\n", "takes no ---- block"),
        ("query contains\nSELECT 1\n----\n", "at least one expected line"),
    ],
)
def test_malformed_scripts_are_hard_errors(text, message):
    with pytest.raises(ScriptError) as info:
        parse(text, "x.test")
    assert message in str(info.value)
    assert str(info.value).startswith("x.test:")


def test_error_reports_line_number():
    with pytest.raises(ScriptError, match=r"^s.test:4: unknown directive 'bogus'"):
        parse("statement ok\nSELECT 1\n\nbogus\nSELECT 2\n", "s.test")


# ---- rendering -------------------------------------------------------------------------------


def test_batch_rendering_matches_mysql_cli():
    header, rows = runner.render_rows(
        ["k", "v"], [(b"1", None), (b"2", "a\tb\nc\\d".encode()), (b"3", b""), ("北京".encode(), b"x")]
    )
    assert header == "k\tv"
    assert rows == ["1\tNULL", "2\ta\\tb\\nc\\\\d", "3", "北京\tx"]


def test_empty_output_line_is_written_as_empty_marker():
    _, rows = runner.render_rows(["s"], [(b"",)])
    assert rows == ["(empty)"]


def test_contains_in_order():
    actual = ["CREATE TABLE `t` (", "  `k` int NULL", ") ENGINE=OLAP", "AGGREGATE KEY(`k`)"]
    assert runner.contains_in_order(["`k` int", "AGGREGATE KEY(`k`)"], actual) is None
    assert runner.contains_in_order(["AGGREGATE KEY", "`k` int"], actual) == "`k` int"


def test_raw_lines_split_multiline_values_and_keep_empty_strings():
    lines = runner.raw_lines(["Table", "Create Table"], [(b"t", b"CREATE TABLE `t` (\n  `k` int\n)")])
    assert lines == ["Table\tCreate Table", "t\tCREATE TABLE `t` (", "  `k` int", ")"]
    assert runner.raw_lines(["a", "b"], [(b"", None)]) == ["a\tb", "\tNULL"]


def test_database_name_is_sanitized():
    from pathlib import Path

    assert runner.database_name(Path("tests/sql/models-aggregate.test")) == "test_models_aggregate"


# ---- running against a fake session -----------------------------------------------------------


class FakeSession:
    """Answers statements from `ANSWERS`; records what it was sent."""

    ANSWERS: dict[str, Outcome] = {}
    sent: list[str] = []

    def __init__(self, host, port, db):
        self.db = db

    def run(self, sql: str) -> Outcome:
        FakeSession.sent.append(sql)
        if sql.startswith(("DROP DATABASE", "CREATE DATABASE", "USE")) and sql not in self.ANSWERS:
            return Outcome()
        return self.ANSWERS[sql]

    def close(self):
        pass


@pytest.fixture
def fake(monkeypatch):
    FakeSession.sent = []
    FakeSession.ANSWERS = {
        "INSERT INTO t VALUES (1), (2)": Outcome(affected=2),
        "SELECT k, v FROM t ORDER BY k": Outcome(names=["k", "v"], rows=[(b"1", b"a"), (b"2", None)]),
        "USE nope": Outcome(errno=1049, error="errCode = 2, detailMessage = Unknown database 'nope'"),
        "SELECT v FROM t": Outcome(names=["v"], rows=[(b"b",), (b"a",)]),
        "EXPLAIN SELECT 1": Outcome(names=["Explain String"], rows=[(b"PLAN FRAGMENT 0",), (b"  OUTPUT EXPRS:",)]),
    }
    monkeypatch.delenv(runner.REGENERATE_ENV, raising=False)
    return FakeSession


def write(tmp_path, text: str):
    path = tmp_path / "demo.test"
    path.write_text(dedent(text))
    return path


GOOD = """
    statement ok
    INSERT INTO t VALUES (1), (2)
    ----
    affected 2

    statement error 1049 Unknown database 'nope'
    USE nope

    query
    SELECT k, v FROM t ORDER BY k
    ----
    k\tv
    1\ta
    2\tNULL

    query rowsort
    SELECT v FROM t
    ----
    v
    a
    b

    explain
    EXPLAIN SELECT 1
    ----
    PLAN FRAGMENT 0
      OUTPUT EXPRS:
    """


def test_passing_script_sets_up_and_drops_its_database(tmp_path, fake):
    result = runner.run_script(write(tmp_path, GOOD), "h", 1, session_factory=fake)
    assert result.failures == []
    assert fake.sent[:3] == ["DROP DATABASE IF EXISTS `test_demo`", "CREATE DATABASE `test_demo`", "USE `test_demo`"]
    assert fake.sent[-1] == "DROP DATABASE IF EXISTS `test_demo`"


BAD = """
    statement ok
    INSERT INTO t VALUES (1), (2)
    ----
    affected 3

    statement error 1050
    USE nope

    statement ok
    USE nope

    query
    SELECT k, v FROM t ORDER BY k
    ----
    k\tv
    1\ta
    2\tb

    query
    SELECT v FROM t
    """


def test_failures_are_reported_with_line_numbers_and_diffs(tmp_path, fake):
    path = write(tmp_path, BAD)
    result = runner.run_script(path, "h", 1, session_factory=fake)
    assert [f.record.line for f in result.failures] == [1, 6, 9, 12, 19]
    report = result.report()
    assert f"{path}:1: statement ok" in report and "expected affected 3, got affected 2" in report
    assert "expected error 1050, got error 1049" in report
    assert "expected success, got error 1049" in report
    assert "-2\tb" in report and "+2\tNULL" in report
    assert "no expected output" in report
    assert path.read_text() == dedent(BAD), "a normal run must never rewrite the script"


def test_regenerate_rewrites_outputs_but_not_outcomes(tmp_path, fake, monkeypatch):
    path = write(tmp_path, BAD)
    monkeypatch.setenv(runner.REGENERATE_ENV, "1")
    result = runner.run_script(path, "h", 1, session_factory=fake)
    assert result.regenerated == 4
    # `statement ok` that failed is an outcome change: still a failure, not rewritten.
    assert [f.record.line for f in result.failures] == [9]
    assert path.read_text() == dedent("""
        statement ok
        INSERT INTO t VALUES (1), (2)
        ----
        affected 2

        statement error 1049 errCode = 2, detailMessage = Unknown database 'nope'
        USE nope

        statement ok
        USE nope

        query
        SELECT k, v FROM t ORDER BY k
        ----
        k\tv
        1\ta
        2\tNULL

        query
        SELECT v FROM t
        ----
        v
        b
        a
        """)
    # A second regeneration changes nothing.
    again = runner.run_script(path, "h", 1, session_factory=fake)
    assert again.regenerated == 0 and [f.record.line for f in again.failures] == [9]


def test_client_side_errors_do_not_satisfy_statement_error(tmp_path, fake):
    fake.ANSWERS["SELECT sleep(1000)"] = Outcome(errno=2013, error="Lost connection to MySQL server during query")
    path = write(tmp_path, "statement error\nSELECT sleep(1000)\n")
    result = runner.run_script(path, "h", 1, session_factory=fake)
    assert len(result.failures) == 1 and "client-side error 2013" in result.failures[0].message


def test_contains_failure_shows_actual_output(tmp_path, fake):
    path = write(tmp_path, "query contains\nSELECT k, v FROM t ORDER BY k\n----\n3\tc\n")
    result = runner.run_script(path, "h", 1, session_factory=fake)
    assert len(result.failures) == 1
    assert "does not contain" in result.failures[0].message and "2\tNULL" in result.failures[0].message
