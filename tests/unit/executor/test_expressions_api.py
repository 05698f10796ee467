"""The evaluator's contract: shapes, types on zero rows, errors, folding and helpers."""

from datetime import date, datetime
from decimal import Decimal

import pyarrow as pa
import pytest
from sqlglot import exp

from executor.expressions import (EvalContext, ExpressionError, UnknownColumnError,
                                  UnsupportedExpression, constant_fold, evaluate,
                                  evaluate_predicate, infer_type, literal_value)
from expr_helpers import CTX, ONE_ROW, TABLE, parse, run


def test_constants_broadcast_to_the_batch():
    result = evaluate(parse("1 + 1"), TABLE, CTX)
    assert isinstance(result, pa.Array)
    assert result.to_pylist() == [2, 2, 2, 2]
    assert evaluate(parse("NULL"), TABLE, CTX).to_pylist() == [None] * 4


def test_select_without_from_runs_over_one_row():
    assert evaluate(parse("CONCAT('a', 'b')"), ONE_ROW, CTX).to_pylist() == ["ab"]


def test_zero_rows_keep_the_result_type():
    empty = TABLE.slice(0, 0)
    for sql, expected in [("i + 1", pa.int64()), ("p * 2", pa.decimal128(13, 2)),
                          ("s LIKE 'a%'", pa.bool_()), ("DATE_ADD(d, INTERVAL 1 DAY)", pa.date32()),
                          ("CONCAT(s, 'x')", pa.string()), ("1", pa.int64()),
                          ("YEAR(dt)", pa.int16()), ("i / 2", pa.float64())]:
        result = evaluate(parse(sql), empty, CTX)
        assert len(result) == 0 and result.type == expected, sql


def test_chunked_and_non_canonical_columns():
    table = pa.table({
        "a": pa.chunked_array([[1, 2], [3]], pa.int32()),
        "ls": pa.array(["x", None, "z"], pa.large_string()),
        "ts": pa.array([0, 1_000, None], pa.timestamp("ms")),
        "dict": pa.array(["p", "q", "p"]).dictionary_encode(),
    })
    assert evaluate(parse("a * 2"), table, CTX).to_pylist() == [2, 4, 6]
    assert evaluate(parse("CONCAT(ls, '!')"), table, CTX).to_pylist() == ["x!", None, "z!"]
    assert evaluate(parse("SECOND(ts)"), table, CTX).to_pylist() == [0, 1, None]
    assert evaluate(parse("dict = 'p'"), table, CTX).to_pylist() == [True, False, True]


def test_column_lookup():
    assert evaluate(parse("I + 0"), TABLE, CTX).to_pylist() == [1, None, -7, 2]
    with pytest.raises(UnknownColumnError) as info:
        evaluate(parse("nope + 1"), TABLE, CTX)
    assert info.value.code == 1054
    assert "Unknown column 'nope'" in info.value.message


def test_unsupported_nodes_are_errors_not_guesses():
    with pytest.raises(UnsupportedExpression) as info:
        evaluate(parse("SOME_UDF(i)"), TABLE, CTX)
    assert "SOME_UDF" in str(info.value)
    with pytest.raises(UnsupportedExpression):
        evaluate(parse("SUM(i)"), TABLE, CTX)
    with pytest.raises(UnsupportedExpression):
        evaluate(parse("i IN (SELECT 1)"), TABLE, CTX)
    with pytest.raises(UnsupportedExpression):
        evaluate(parse("ARRAY_SHUFFLE(ARRAY(1, 2))"), TABLE, CTX)  # no random functions on arrays


def test_errors_carry_mysql_codes():
    with pytest.raises(ExpressionError) as info:
        evaluate(parse("b * 9223372036854775807"), TABLE, CTX)
    assert info.value.code == 1105
    assert info.value.client_message().startswith("errCode = 2, detailMessage = ")


def test_evaluate_predicate():
    result = evaluate_predicate(parse("i"), TABLE, CTX)
    assert result.type == pa.bool_()
    assert result.to_pylist() == [True, None, True, True]
    assert evaluate_predicate(parse("1"), TABLE, CTX).to_pylist() == [True] * 4


def test_infer_type():
    schema = TABLE.schema
    assert infer_type(parse("p / t"), schema, CTX) == pa.decimal128(14, 6)
    assert infer_type(parse("CAST(s AS DATE)"), schema, CTX) == pa.date32()


@pytest.mark.parametrize("sql, expected", [
    ("1 + 1", 2), ("-5", -5), ("1.5", Decimal("1.5")), ("'x'", "x"), ("NULL", None),
    ("DATE '2020-01-01'", date(2020, 1, 1)), ("NOW()", datetime(2024, 5, 17, 10, 11, 12)),
])
def test_literal_value(sql, expected):
    assert literal_value(parse(sql), CTX) == expected


def test_literal_value_rejects_column_references():
    with pytest.raises(UnknownColumnError):
        literal_value(parse("i + 1"), CTX)


def test_constant_fold_keeps_types_and_columns():
    folded = constant_fold(parse("i > 1 + 2 AND d >= DATE_ADD('2020-01-01', INTERVAL 1 MONTH)"),
                           CTX)
    sql = folded.sql(dialect="doris")
    assert "1 + 2" not in sql and "DATE_ADD" not in sql
    assert folded.find(exp.Column) is not None
    original = evaluate(parse("i > 1 + 2 AND d >= DATE_ADD('2020-01-01', INTERVAL 1 MONTH)"),
                        TABLE, CTX)
    assert evaluate(folded, TABLE, CTX).equals(original)
    for sql in ["1.5 * 2", "LENGTH('abc')", "CAST(1 AS TINYINT) + 0", "2.5e0 * 2",
                "TIMESTAMP '2020-01-01 10:00:00.5'", "CAST(NULL AS INT)", "-3", "'a' = 'a'"]:
        folded_one = constant_fold(parse(sql), CTX)
        assert run(folded_one.sql(dialect="doris")).equals(run(sql)), sql
        assert evaluate(folded_one, ONE_ROW, CTX).equals(run(sql)), sql


def test_constant_fold_leaves_nondeterministic_and_failing_parts():
    folded = constant_fold(parse("RAND() + (1 + 1)"), CTX)
    assert folded.find(exp.Rand) is not None
    assert folded.sql() == "RAND() + 2"
    kept = constant_fold(parse("SOME_UDF(1)"), CTX)
    assert kept.sql() == "SOME_UDF(1)"


def test_context_defaults_and_time_zones():
    ctx = EvalContext()
    assert ctx.now is not None and ctx.now.tzinfo is None
    aware = EvalContext(now=datetime(2024, 1, 1, tzinfo=__import__("datetime").timezone.utc),
                        time_zone="Asia/Shanghai")
    assert aware.now == datetime(2024, 1, 1, 8)
    with pytest.raises(ExpressionError):
        EvalContext(time_zone="Mars/Olympus")
