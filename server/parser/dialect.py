"""The project's changes to sqlglot's Doris dialect, made once when the parser loads.

- FORMAT(fmt, v1, v2, ...) is Doris's {fmt}-style format (any number of values); sqlglot reads
  it as MySQL's FORMAT(number, decimals[, locale]) (exp.NumberToStr) and refuses a fourth
  argument. It becomes a plain call (exp.Anonymous), which the evaluator's FORMAT handles
  (executor/expressions/format_function.py).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.doris import Doris


def _format_call(args: list) -> exp.Expression:
    return exp.Anonymous(this="format", expressions=args)


def install() -> None:
    parser = Doris.Parser
    if parser.FUNCTIONS.get("FORMAT") is not _format_call:
        parser.FUNCTIONS = {**parser.FUNCTIONS, "FORMAT": _format_call}


install()
