"""MATCH_ANY / MATCH_ALL / MATCH_PHRASE / MATCH_PHRASE_PREFIX / MATCH_REGEXP (and MATCH).

sqlglot parses `col MATCH_xxx 'query'` into `exp.Match(kind=...)`. The planner notes the
column's inverted index properties on the node (`meta["inverted"]`, planner/match_columns.py);
without an index the value is analysed with parser "none" (the whole value is one term), as
Doris 2.1 evaluates a MATCH on a column without an index when
enable_match_without_inverted_index is true. Evaluation: storage/inverted/match.py.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from storage.inverted.analyzer import Analyzer
from storage.inverted.match import evaluate, sql_kind


def eval_match(node: exp.Match, frame: Frame) -> Value:
    kind = sql_kind(node.args.get("kind"))
    query = frame.eval(node.expression)
    if not isinstance(query, pa.Scalar):
        raise ExpressionError(f"{kind} query must be a constant string")
    values = frame.eval(node.this)
    if query.as_py() is None:
        n = 1 if isinstance(values, pa.Scalar) else len(values)
        return pa.nulls(n, pa.bool_()) if not isinstance(values, pa.Scalar) else \
            pa.scalar(None, pa.bool_())
    analyzer = Analyzer.of(node.meta.get("inverted"))
    text = str(query.as_py())
    if isinstance(values, pa.Scalar):
        return evaluate(kind, pa.array([values.as_py()], pa.string()), text, analyzer)[0]
    return evaluate(kind, values, text, analyzer)


HANDLERS = {exp.Match: eval_match}
