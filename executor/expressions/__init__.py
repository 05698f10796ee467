"""Scalar expression evaluation over Arrow batches, with Doris/MySQL semantics.

    from executor.expressions import evaluate, EvalContext
    arr = evaluate(sqlglot_expr, batch, EvalContext(now=..., time_zone="Asia/Shanghai"))

See `evaluate.py` for the dispatch and the life of an expression; one module per family.
"""

from executor.expressions.context import EvalContext
from executor.expressions.errors import (ArithmeticOverflow, ExpressionError, UnknownColumnError,
                                         UnsupportedExpression)
from executor.expressions.evaluate import (constant_fold, evaluate, evaluate_many,
                                           evaluate_predicate, infer_type, literal_value)

__all__ = [
    "ArithmeticOverflow", "EvalContext", "ExpressionError", "UnknownColumnError",
    "UnsupportedExpression", "constant_fold", "evaluate", "evaluate_many", "evaluate_predicate", "infer_type",
    "literal_value",
]
