"""LIKE conjuncts an NGRAM_BF index can serve: `col LIKE 'pattern'` on an indexed column.

`annotate_like(conj, scan)` (from binder._filter_scan, beside the MATCH annotation) hands a
top-level `col LIKE 'literal'` on a column of the scan that has an NGRAM_BF index to storage
as an `NgramFilter` in `scan.match_filters`: the segments skip the pages whose n-gram bloom
filters rule the pattern out (storage/segment/ngram_bloom.py). The LIKE stays in the Filter
above the scan, which decides every row storage returns, so the answers are a full scan's.
"""

from __future__ import annotations

from sqlglot import exp

from storage.segment.ngram_bloom import NgramFilter


def annotate_like(conj: exp.Expression, scan) -> None:
    if not scan.ngram_bf_indexes or not isinstance(conj, exp.Like):
        return
    column, pattern = conj.this, conj.expression
    if conj.args.get("escape") is not None or not isinstance(column, exp.Column) \
            or not isinstance(pattern, exp.Literal) or not pattern.is_string:
        return
    if column.name not in scan.output:
        return
    name = scan.columns[scan.output.index(column.name)]
    if name in scan.ngram_bf_indexes:
        scan.match_filters.append(NgramFilter(name, pattern.this))
