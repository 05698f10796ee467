"""sequence_match(pattern, ts, c1, ..., cn) and sequence_count(...), Doris's path-analysis
aggregates (ClickHouse's sequenceMatch / sequenceCount), planned as window_funnel is: the
timestamp and the conditions' bits collected per group (planner/window_funnel.py:event_inputs),
finished by executor/operators/sequence_match.py.

The pattern is checked here, as Doris's FE does before the BE parses it: a constant string of
`(?N)` (condition N, 1 <= N <= n), `.` (any one event), `.*` (any events) and `(?t op S)`
(op one of <=, <, >=, >, ==; S seconds since the previous matched event; it must follow an
event or `.*`), at most 32 conditions.
"""

from __future__ import annotations

import re

from sqlglot import exp

from catalog.errors import AnalysisError
from planner import logical as L
from planner.window_funnel import EventAggregate, event_inputs

MAX_CONDITIONS = 32
_TOKEN = re.compile(r"\(\?t(<=|<|>=|>|==)(\d+)\)|\(\?(\d+)\)|\.\*|\.")


class SequenceMatch(EventAggregate):
    """`name_`: sequence_match or sequence_count; `pattern`; `conds`: how many."""

    arg_types = {"this": True, "expression": True, "name_": True, "pattern": True,
                 "conds": True, "text": True}


def parse_pattern(pattern: str, conds: int) -> list[tuple]:
    """The pattern's actions: ("event", k) 0-based, ("any",), ("star",), ("time", op, s)."""
    actions: list[tuple] = []
    pos = 0
    while pos < len(pattern):
        m = _TOKEN.match(pattern, pos)
        if m is None:
            raise AnalysisError(f"Could not parse pattern, unexpected starting symbol "
                                f"'{pattern[pos:]}' at position {pos}")
        if m.group(1):
            if not actions or actions[-1][0] == "time":
                raise AnalysisError("Temporal condition should be preceded by an event condition")
            actions.append(("time", m.group(1), int(m.group(2))))
        elif m.group(3):
            number = int(m.group(3))
            if not 1 <= number <= conds:
                raise AnalysisError(f"Event number {number} is out of range")
            actions.append(("event", number - 1))
        elif m.group(0) == ".*":
            actions.append(("star",))
        else:
            actions.append(("any",))
        pos = m.end()
    return actions


def lift_sequence_match(node: exp.Anonymous, name: str) -> exp.Expression:
    args = node.expressions
    text = f"{name}({', '.join(a.sql(dialect='doris') for a in args)})"
    if len(args) < 3:
        raise AnalysisError(f"The {name} function must have at least three params")
    pattern, ts, conds = args[0], args[1], args[2:]
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise AnalysisError(f"The pattern params of {name} function must be string")
    if len(conds) > MAX_CONDITIONS:
        raise AnalysisError(f"The {name} function supports at most {MAX_CONDITIONS} event "
                            f"conditions, but got {len(conds)}")
    parse_pattern(pattern.this, len(conds))
    stamp, bits = event_inputs(ts, conds)
    return SequenceMatch(this=stamp, expression=bits, name_=name, pattern=pattern.this,
                         conds=str(len(conds)), text=text)


def sequence_match_call(node: SequenceMatch, out: str, argument) -> L.AggCall:
    return L.AggCall(node.args["name_"], None, out,
                     args=[argument(node.this), argument(node.expression)],
                     param=(node.args["pattern"], int(node.args["conds"]), node.args["text"]))
