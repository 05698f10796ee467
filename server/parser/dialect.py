"""The project's changes to sqlglot's Doris dialect, made once when the parser loads.

- FORMAT(fmt, v1, v2, ...) is Doris's {fmt}-style format (any number of values); sqlglot reads
  it as MySQL's FORMAT(number, decimals[, locale]) (exp.NumberToStr) and refuses a fourth
  argument. It becomes a plain call (exp.Anonymous), which the evaluator's FORMAT handles
  (executor/expressions/format_function.py).
- IFNULL(a, b) and NVL(a, b) stay exp.Coalesce (one evaluator) but remember the name written,
  in `meta["function"]`, for the result column's name (planner/naming.py): Doris labels the
  column `ifnull(a, 1)`, not `coalesce(a, 1)`.
- Doris's type names LARGEINT, DECIMALV2 / DECIMALV3, DATEV2 and DATETIMEV2 are type keywords,
  so that `CAST(x AS LARGEINT)` and `CAST(x AS DECIMALV3(10, 2))` parse (sqlglot's tokenizer
  knows none of them and refused the CAST); LARGEINT is written back as LARGEINT, not INT128.
- GROUP_CONCAT takes Doris's two separator forms: `group_concat(x, '-')` (sqlglot's Doris
  dialect) and `group_concat([DISTINCT] x [ORDER BY ...] SEPARATOR '-')` (DorisParser.g4's
  groupConcat rule; sqlglot's Doris dialect dropped MySQL's parser and refused the keyword).
- FIRST_VALUE(x, ignore_null) / LAST_VALUE(x, ignore_null): Doris's second argument (a boolean
  constant; sqlglot takes one argument only) is kept in the node's `meta["ignore_nulls"]`
  (planner/window.py).
- like(str, pattern) in function form: sqlglot's builder takes the arguments the other way
  round (SQLite's like(pattern, str)).
- ARRAY_FIRST / ARRAY_LAST(lambda, arr) are plain calls (executor/expressions/
  array_lambdas.py): sqlglot reads them as its one-argument ArrayFirst / ArrayLast and refused
  Doris's lambda form of ARRAY_LAST.
- CURRENT_DATE without parentheses (DorisParser.g4's currentDate; sqlglot's Doris dialect
  dropped it from MySQL's no-parenthesis functions, so it was read as a column).
- Doris's braces: `{k1: v1, k2: v2}` is a MAP literal and `{v1, v2}` a STRUCT literal
  (DorisParser.g4's mapLiteral / structLiteral); sqlglot read both as DuckDB structs, turning
  the map's keys into identifiers (`{'a': 1}` lost its string key). They become exp.VarMap
  (keys, values) and exp.Struct (values); `map(k1, v1, k2, v2)` is an exp.VarMap too (sqlglot
  took at most two arguments), written back as `map(k1, v1, ...)`.
- An array literal is written back as it was written: `[1, 2]` or `array(1, 2)` (sqlglot's
  MySQL-based generator wrote `ARRAY(1, 2)` and logged "Arrays are not supported by MySQL"
  for every result column named after one).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.parser import build_coalesce
from sqlglot.tokens import TokenType


def _format_call(args: list) -> exp.Expression:
    return exp.Anonymous(this="format", expressions=args)


def _plain_call(name: str):
    def build(args: list) -> exp.Expression:
        return exp.Anonymous(this=name, expressions=args)
    return build


def _named_coalesce(name: str):
    def build(args: list) -> exp.Expression:
        node = build_coalesce(args)
        node.meta["function"] = name
        return node
    return build


_TYPE_KEYWORDS = {"LARGEINT": TokenType.INT128, "DECIMALV2": TokenType.DECIMAL,
                  "DECIMALV3": TokenType.DECIMAL, "DATEV2": TokenType.DATE,
                  "DATETIMEV2": TokenType.DATETIME}


def _array_sql(self, node: exp.Array) -> str:
    items = self.expressions(node, flat=True)
    if "value_constructor" in node.args:  # written with brackets
        return f"[{items}]"
    return f"{self.normalize_func('ARRAY')}({items})"


_sqlglot_parse_bracket = Doris.Parser._parse_bracket


def _parse_bracket(self, this: exp.Expression | None = None) -> exp.Expression | None:
    if this is not None or not self._match(TokenType.L_BRACE):
        return _sqlglot_parse_bracket(self, this)
    items: list = []
    if not self._match(TokenType.R_BRACE):
        while True:
            item = self._parse_disjunction()
            if self._match(TokenType.COLON):
                item = (item, self._parse_disjunction())
            items.append(item)
            if self._match(TokenType.R_BRACE):
                break
            if not self._match(TokenType.COMMA):
                self.raise_error("Expected , or }")
    pairs = [x for x in items if isinstance(x, tuple)]
    if pairs and len(pairs) != len(items):
        self.raise_error("A map literal needs a key for every value")
    if pairs or not items:
        node = _var_map([part for pair in pairs for part in pair])
    else:
        node = self.expression(exp.Struct(expressions=items))
    return _sqlglot_parse_bracket(self, node)


def _var_map(args: list) -> exp.Expression:
    """`map(k1, v1, k2, v2, ...)` and `{k1: v1, ...}`: keys and values as two arrays."""
    if len(args) % 2:
        raise ValueError("map takes an even number of arguments: keys and values")
    return exp.VarMap(keys=exp.Array(expressions=args[0::2]),
                      values=exp.Array(expressions=args[1::2]))


def _var_map_sql(self, node: exp.VarMap) -> str:
    keys, values = node.args["keys"].expressions, node.args["values"].expressions
    items = ", ".join(self.sql(part) for pair in zip(keys, values) for part in pair)
    return f"{self.normalize_func('map')}({items})"


def _parse_group_concat(self) -> exp.Expression:
    args = self._parse_csv(self._parse_lambda)
    if self._match(TokenType.SEPARATOR):
        if len(args) != 1:
            self.raise_error("GROUP_CONCAT with SEPARATOR takes one expression")
        return self.expression(exp.GroupConcat(this=args[0], separator=self._parse_field()))
    return exp.GroupConcat.from_arg_list(args)


def _value_with_nulls(kind: type, name: str):
    """A FUNCTION_PARSERS entry (a plain FUNCTIONS builder would be refused by sqlglot's
    argument count check, which counts the arguments written)."""
    def parse(self) -> exp.Expression:
        args = self._parse_csv(self._parse_lambda)
        if len(args) not in (1, 2):
            self.raise_error(f"{name} takes one or two arguments")
        node = self.expression(kind(this=args[0]))
        if len(args) == 2:
            if not isinstance(args[1], exp.Boolean):
                self.raise_error(f"{name}: the second argument must be true or false")
            node.meta["ignore_nulls"] = bool(args[1].this)
        return node
    return parse


def _like_call(args: list) -> exp.Expression:
    if len(args) != 2:
        raise ValueError("like takes a string and a pattern")
    node = exp.Like(this=args[0], expression=args[1])
    node.meta["function"] = "like"  # labelled like(a, b) (planner/naming.py)
    return node


def _now_sql(self, node: exp.CurrentTimestamp) -> str:
    """CURRENT_TIMESTAMP(n) written back with its precision (sqlglot writes NOW(), so a view or
    a label lost it)."""
    return self.func("NOW", node.this) if node.this is not None else self.func("NOW")


def install() -> None:
    tokenizer, generator = Doris.Tokenizer, Doris.Generator
    if "LARGEINT" not in tokenizer.KEYWORDS:
        tokenizer.KEYWORDS = {**tokenizer.KEYWORDS, **_TYPE_KEYWORDS}
        generator.TYPE_MAPPING = {**generator.TYPE_MAPPING,
                                  exp.DataType.Type.INT128: "LARGEINT"}
        generator.TRANSFORMS = {**generator.TRANSFORMS, exp.Array: _array_sql,
                                exp.VarMap: _var_map_sql, exp.CurrentTimestamp: _now_sql}
    parser = Doris.Parser
    if TokenType.CURRENT_DATE not in parser.NO_PAREN_FUNCTIONS:
        parser.NO_PAREN_FUNCTIONS = {**parser.NO_PAREN_FUNCTIONS,
                                     TokenType.CURRENT_DATE: exp.CurrentDate}
    if parser.FUNCTION_PARSERS.get("GROUP_CONCAT") is not _parse_group_concat:
        parser.FUNCTION_PARSERS = {**parser.FUNCTION_PARSERS, "GROUP_CONCAT": _parse_group_concat,
                                   "FIRST_VALUE": _value_with_nulls(exp.FirstValue, "first_value"),
                                   "LAST_VALUE": _value_with_nulls(exp.LastValue, "last_value")}
    if parser._parse_bracket is not _parse_bracket:
        parser._parse_bracket = _parse_bracket
    if parser.FUNCTIONS.get("FORMAT") is not _format_call:
        parser.FUNCTIONS = {**parser.FUNCTIONS, "FORMAT": _format_call, "MAP": _var_map,
                            "IFNULL": _named_coalesce("ifnull"), "NVL": _named_coalesce("nvl"),
                            "LIKE": _like_call, "ARRAY_FIRST": _plain_call("array_first"),
                            "ARRAY_LAST": _plain_call("array_last")}


install()
