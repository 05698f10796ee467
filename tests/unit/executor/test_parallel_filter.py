"""A large filter's input is cut into row ranges evaluated in parallel (executor/operators/
filter.py): the same rows, in the same order, as one pass."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import sqlglot

from executor.expressions import EvalContext
from executor.operators import filter as filter_op


def test_pieces_give_the_rows_of_one_pass(monkeypatch):
    monkeypatch.setattr(filter_op, "PARALLEL_ROWS", 1000)
    rng = np.random.default_rng(5)
    n = 10_001
    words = np.array(["special requests", "plain", "requests special", None], dtype=object)
    table = pa.table({"k": np.arange(n), "c": pa.array(words[rng.integers(0, 4, n)])})
    cond = sqlglot.parse_one("c NOT LIKE '%special%requests%' AND k % 3 <> 0")
    serial = filter_op.run_filter(table, cond, EvalContext())
    with ThreadPoolExecutor(2) as pool:
        parallel = filter_op.run_filter(table, cond, EvalContext(), pool)
    assert parallel.num_rows == serial.num_rows > 0
    assert parallel.column("k").to_pylist() == serial.column("k").to_pylist()
