"""SHOW BUILTIN FUNCTIONS [IN | FROM db] [LIKE '...']: the functions this engine runs, found in
its own registries rather than listed by hand.

A name is built in when a call of it (with one, two or three column arguments, as Doris's
parser reads it) is something the engine evaluates: after the planner's rewrite of Doris's
aggregates (planner/doris_aggregates.py), an aggregate the planner turns into an AggCall
(planner/aggregation.py), a window function it knows (planner/window.py), a node type the
evaluator has a handler for, or a plain call the evaluator has by name
(executor/expressions/evaluate.py). The candidate names are those sqlglot's Doris parser knows,
the evaluator's own and the planner's aggregate names. The answer never changes while the
server runs: it is computed once.
"""

from __future__ import annotations

import functools
import re

import sqlglot
from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.errors import ParseError, TokenError

from catalog.errors import DorisError
from executor.expressions.evaluate import FUNCTIONS, HANDLERS
from planner import collect_aggregates, doris_aggregates, more_aggregates
from planner.aggregation import agg_call
from planner.window import WINDOW_FUNCTIONS

# names the planner rewrites into other aggregates (planner/doris_aggregates.py:_rewrite)
_REWRITTEN = ("percentile", "percentile_approx", "covar", "avg_weighted", "sequence_match",
              "sequence_count", "retention", "window_funnel", "bitmap_agg")
_GENERIC = (exp.Expression, exp.Func, exp.Condition, exp.Binary, exp.Predicate, object)


@functools.cache
def builtin_function_names() -> tuple[str, ...]:
    candidates = {n.lower() for n in Doris.Parser.FUNCTIONS} | {n.lower() for n in FUNCTIONS}
    candidates |= set(doris_aggregates.NAMES) | set(_REWRITTEN)
    candidates |= set(collect_aggregates.CANONICAL) | set(more_aggregates.NAMES)
    return tuple(sorted(n for n in candidates if not _INTERNAL.search(n) and _runs(n)))


# the evaluator's internal helpers (`__...`) and sqlglot's split class names (`j_s_o_n_object`)
_INTERNAL = re.compile(r"^__|(^|_)([a-z]_){2,}")


def _runs(name: str) -> bool:
    for arity in (1, 2, 3):
        args = ", ".join("abc"[:arity])
        try:
            node = sqlglot.parse_one(f"SELECT {name}({args})", read="doris").expressions[0]
        except (ParseError, TokenError, ValueError, TypeError, IndexError, AttributeError):
            continue
        if _evaluated(node):
            return True
    return False


def _evaluated(node: exp.Expression) -> bool:
    try:
        node = doris_aggregates._rewrite(node)  # noqa: SLF001 - the planner's own rewrite
    except DorisError:
        return False
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper() in FUNCTIONS
    if type(node) in WINDOW_FUNCTIONS:
        return True
    if isinstance(node, exp.AggFunc):
        try:
            agg_call(node, "out", lambda e: "arg")
        except (DorisError, AttributeError, TypeError, KeyError, ValueError):
            return False
        return True
    return any(cls in HANDLERS for cls in type(node).__mro__ if cls not in _GENERIC)
