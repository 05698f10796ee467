"""ARRAY functions and array text, evaluated on Arrow batches (semantics of Doris's regression
suite query_p0/sql_functions/array_functions/test_array_functions_by_literal)."""

import pyarrow as pa
import pytest
import sqlglot

from executor.expressions import EvalContext, evaluate
from executor.expressions.array_text import lost_elements, parse_array_text
from executor.expressions.nested_text import format_nested
from executor.expressions.errors import ComplexTypeKey
from executor.operators.sort import sort_indices
from storage.types import DataType

BATCH = pa.table({
    "a": pa.array([[1, 2, 3], None, [], [3, None, 3, 1]], pa.list_(pa.int32())),
    "b": pa.array([[3, 4], [1], [5], [None, 1]], pa.list_(pa.int32())),
    "s": pa.array([["x", "y"], ["a,b"], None, ["z", None]]),
})


def run(sql: str) -> list:
    expr = sqlglot.parse_one(f"SELECT {sql}", read="doris").expressions[0]
    return evaluate(expr, BATCH, EvalContext()).to_pylist()


@pytest.mark.parametrize("sql, expected", [
    ("a[1]", [1, None, None, 3]),
    ("a[-1]", [3, None, None, 1]),
    ("a[0]", [None, None, None, None]),
    ("element_at(a, 4)", [None, None, None, 1]),
    ("size(a)", [3, None, 0, 4]),
    ("array_contains(a, 3)", [True, None, False, True]),
    ("array_contains(a, NULL)", [None, None, None, None]),
    ("array_position(a, 1)", [1, None, 0, 4]),
    ("arrays_overlap(a, b)", [True, None, False, True]),
    ("array_join(a, '-', 'N')", ["1-2-3", None, "", "3-N-3-1"]),
    ("array_distinct(a)", [[1, 2, 3], None, [], [3, None, 1]]),
    ("array_sort(a)", [[1, 2, 3], None, [], [None, 1, 3, 3]]),
    ("array_reverse_sort(a)", [[3, 2, 1], None, [], [3, 3, 1, None]]),
    ("array_sum(a)", [6, None, None, 7]),
    ("array_max(a)", [3, None, None, 3]),
    ("array_slice(a, 2, 1)", [[2], None, [], [None]]),
    ("a[2:3]", [[2, 3], None, [], [None, 3]]),
    ("array_union(a, b)", [[1, 2, 3, 4], None, [5], [3, None, 1]]),
    ("array_intersect(a, b)", [[3], None, [], [None, 1]]),
    ("array_except(a, b)", [[1, 2], None, [], [3]]),
    ("array_remove(a, 3)", [[1, 2], None, [], [None, 1]]),
    ("array_compact([1, 1, NULL, NULL, 2, 1])", [[1, None, 2, 1]] * 4),
    ("array_popfront(a)", [[2, 3], None, [], [None, 3, 1]]),
    ("array_range(1, 10, 4)", [[1, 5, 9]] * 4),
    ("array_range(1, 5, 0)", [None] * 4),
    ("array_with_constant(2, 'x')", [["x", "x"]] * 4),
    ("reverse(a)", [[3, 2, 1], None, [], [1, 3, None, 3]]),
    ("cast(a AS STRING)", ["[1, 2, 3]", None, "[]", "[3, null, 3, 1]"]),
    ("cast('[1, x, 3]' AS ARRAY<INT>)", [[1, None, 3]] * 4),
])
def test_array_functions(sql, expected):
    assert run(sql) == expected


def test_array_text_reads_quotes_commas_nesting_and_flags_bad_rows():
    text = pa.array(['[1, 2]', ' [ ] ', '["a,b", \'c\', null]', 'nope', None, '[[1], []]'])
    lists, bad = parse_array_text(text, DataType("STRING"))
    assert lists.to_pylist()[:5] == [["1", "2"], [], ["a,b", "c", None], None, None]
    assert bad.tolist() == [False, False, False, True, False, True]  # a nested array is no STRING
    nested, bad = parse_array_text(pa.array(["[[1, 2], [], null]", "[1]"]),
                                   DataType.array_of(DataType("INT")))
    assert nested.to_pylist() == [[["1", "2"], [], None], None] and bad.tolist() == [False, True]


def test_array_text_is_written_as_doris_prints_it():
    t = DataType.array_of(DataType.of("VARCHAR", 5))
    out = format_nested(pa.array([["a", None], None, []], t.arrow()), t, lambda a, _: a)
    assert out.to_pylist() == ['["a", null]', None, "[]"]


def test_lost_elements_marks_rows_strict_mode_filters():
    src = pa.array(["[1, 2]", "[1, x]", "oops", None])
    converted = evaluate(sqlglot.parse_one("SELECT CAST(s AS ARRAY<INT>)", read="doris")
                         .expressions[0], pa.table({"s": src}), EvalContext())
    assert lost_elements(src, converted).tolist() == [False, True, True, False]


def test_an_array_sort_key_is_refused_with_doris_message():
    class Key:
        name, descending = "a", False

        @staticmethod
        def nulls_at_start():
            return True
    with pytest.raises(ComplexTypeKey, match="don't support filter, group by or order by"):
        sort_indices(BATCH, [Key()])
