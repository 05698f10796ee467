"""Boolean connectives with SQL three-valued logic: AND, OR, NOT, XOR.

Operands go through `casts.truthy` (MySQL: a number is true when non-zero, a string is read as a
number), then Arrow's Kleene kernels: FALSE AND NULL is FALSE, TRUE OR NULL is TRUE, NOT NULL is
NULL, and XOR is NULL when either side is.
"""

from __future__ import annotations

import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import truthy
from executor.expressions.context import Frame, Value


def eval_and(node: exp.And, frame: Frame) -> Value:
    return pc.and_kleene(truthy(frame.eval(node.this)), truthy(frame.eval(node.expression)))


def eval_or(node: exp.Or, frame: Frame) -> Value:
    return pc.or_kleene(truthy(frame.eval(node.this)), truthy(frame.eval(node.expression)))


def eval_not(node: exp.Not, frame: Frame) -> Value:
    return pc.invert(truthy(frame.eval(node.this)))


def eval_xor(node: exp.Xor, frame: Frame) -> Value:
    operands = [node.this, node.expression] if node.this is not None else []
    operands += node.expressions
    result = truthy(frame.eval(operands[0]))
    for operand in operands[1:]:
        result = pc.xor(result, truthy(frame.eval(operand)))
    return result


HANDLERS = {exp.And: eval_and, exp.Or: eval_or, exp.Not: eval_not, exp.Xor: eval_xor}
