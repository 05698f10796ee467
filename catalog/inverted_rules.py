"""INVERTED index PROPERTIES rules, with Doris 2.1's messages (`InvertedIndexUtil`).

    parser          none (default) | english | unicode | chinese | standard; a parser other
                    than none only on CHAR / VARCHAR / STRING columns
    parser_mode     fine_grained | coarse_grained, chinese only
    support_phrase  true | false          lower_case  true | false
    ignore_above    a positive integer    stopwords   none
    char_filter_type, char_filter_pattern, char_filter_replacement (char_replace)
Any other key is refused.
"""

from __future__ import annotations

import re

from catalog.errors import AnalysisError
from catalog.model import Column

ALLOWED_KEYS = ("parser", "parser_mode", "support_phrase", "char_filter_type",
                "char_filter_pattern", "char_filter_replacement", "ignore_above", "lower_case",
                "stopwords")
_STRING_KINDS = ("CHAR", "VARCHAR", "STRING")


def check_properties(props: dict[str, str]) -> None:
    """Doris `InvertedIndexUtil.checkInvertedIndexProperties`."""
    for key in props:
        if key not in ALLOWED_KEYS:
            raise AnalysisError(f"Invalid inverted index property key: {key}")
    parser, mode = props.get("parser"), props.get("parser_mode")
    if parser is not None and not re.fullmatch("none|english|unicode|chinese|standard", parser):
        raise AnalysisError(f"Invalid inverted index 'parser' value: {parser}, "
                            "parser must be none, english, unicode or chinese")
    if parser != "chinese" and mode is not None:
        raise AnalysisError("parser_mode is only available for chinese parser")
    if parser == "chinese" and mode is not None and \
            not re.fullmatch("fine_grained|coarse_grained", mode):
        raise AnalysisError(f"Invalid inverted index 'parser_mode' value: {mode}, "
                            "parser_mode must be fine_grained or coarse_grained")
    phrase = props.get("support_phrase")
    if phrase is not None and not re.fullmatch("true|false", phrase):
        raise AnalysisError(f"Invalid inverted index 'support_phrase' value: {phrase}, "
                            "support_phrase must be true or false")
    if props.get("char_filter_type") == "char_replace" and not props.get("char_filter_pattern"):
        raise AnalysisError("Missing 'char_filter_pattern' for 'char_replace' filter type")
    above = props.get("ignore_above")
    if above is not None:
        if not re.fullmatch(r"[+-]?\d+", above.strip()) or abs(int(above)) >= 2 ** 31:
            raise AnalysisError("Invalid inverted index 'ignore_above' value, "
                                "ignore_above must be integer")
        if int(above) <= 0:
            raise AnalysisError(f"Invalid inverted index 'ignore_above' value: {int(above)}, "
                                "ignore_above must be positive")
    lower = props.get("lower_case")
    if lower is not None and not re.fullmatch("true|false", lower):
        raise AnalysisError(f"Invalid inverted index 'lower_case' value: {lower}, "
                            "lower_case must be true or false")
    stop = props.get("stopwords")
    if stop is not None and stop != "none":
        raise AnalysisError(f"Invalid inverted index 'stopWords' value: {stop}, "
                            "stopWords must be none")


def check_parser(col: Column, props: dict[str, str]) -> None:
    """Doris `InvertedIndexUtil.checkInvertedIndexParser`: the parser fits the column type."""
    if props:
        check_properties(props)
    parser = props.get("parser", "none")
    kind = col.type.kind
    if kind in _STRING_KINDS:
        return
    if parser != "none":
        raise AnalysisError(f"INVERTED index with parser: {parser} is not supported for "
                            f"column: {col.name} of type {kind}")
