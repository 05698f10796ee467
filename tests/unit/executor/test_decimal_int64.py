"""The int64 path of DECIMAL + - * gives exactly what Arrow's decimal128/256 path gives (values,
types, NULLs, rounding to a reduced result scale), and steps aside when it cannot be exact."""

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from executor.expressions import arithmetic, decimal_int64


def decimals(rng, n, digits, p, s):
    vals = [None if rng.random() < 0.1 else
            Decimal(int(rng.integers(-10 ** digits, 10 ** digits))).scaleb(-s) for _ in range(n)]
    return pa.array(vals, pa.decimal128(p, s))


def arrow_path(op, a, b, out, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(decimal_int64, "arith", lambda *args: None)
        return arithmetic._decimal_kernel(op, a, b, out)


@pytest.mark.parametrize("op", ["+", "-", "*"])
@pytest.mark.parametrize("t1, t2", [((15, 2), (15, 2)), ((31, 4), (16, 2)), ((38, 10), (20, 5)),
                                    ((5, 3), (10, 0))])
def test_matches_the_arrow_path(op, t1, t2, monkeypatch):
    rng = np.random.default_rng(sum(t1) + sum(t2))
    a, b = decimals(rng, 400, min(7, t1[0] - 1), *t1), decimals(rng, 400, min(4, t2[0] - 1), *t2)
    out = arithmetic.decimal_result_type(op, a.type, b.type, 4)
    fast = decimal_int64.arith(op, a, b, out)
    assert fast is not None
    slow = arrow_path(op, a, b, out, monkeypatch)
    assert fast.type == slow.type and fast.to_pylist() == slow.to_pylist()


def test_steps_aside_when_it_could_overflow():
    big = pa.array([Decimal(2 ** 40)], pa.decimal128(20, 0))
    out = arithmetic.decimal_result_type("*", big.type, big.type, 4)
    assert decimal_int64.arith("*", big, big, out) is None
    huge = pa.array([Decimal(10 ** 30)], pa.decimal128(38, 0))
    assert decimal_int64.unscaled(huge) is None


def test_retyped_keeps_the_bytes():
    a = pa.array([Decimal("1.5"), None, Decimal("-2.25")], pa.decimal128(5, 2)).slice(1)
    r = decimal_int64.retyped(a, pa.decimal128(38, 2))
    assert r.type == pa.decimal128(38, 2) and r.to_pylist() == [None, Decimal("-2.25")]
    assert decimal_int64.retyped(a, pa.decimal128(38, 1)) is None  # fewer digits: a real cast


def test_retyped_to_a_larger_scale_multiplies():
    a = pa.array([Decimal("1.50"), None, Decimal("-2.25")], pa.decimal128(15, 2))
    r = decimal_int64.retyped(pa.chunked_array([a]), pa.decimal128(38, 4))
    assert r.type == pa.decimal128(38, 4) and r.to_pylist() == a.cast(r.type).to_pylist()


# -- chains of operations held in int64, common subexpressions ----------------------------------
from executor.expressions import evaluate_many  # noqa: E402
from executor.expressions.decimal_int64 import Unscaled  # noqa: E402
from tests.unit.executor.expr_helpers import CTX, parse  # noqa: E402

_CHAIN = ["p * (1 - q)", "p * (1 - q) * (1 + r)", "-(p - q) * 3 + r", "p * 2.5 - i",
          "(p + q) * (p - q) * (r + 1)", "i * p + b"]


def _batch(rng, n):
    p = decimals(rng, n, 9, 15, 2)
    q, r = decimals(rng, n, 2, 15, 2), decimals(rng, n, 2, 15, 2)
    i = pa.array(rng.integers(-1000, 1000, n), pa.int32())
    b = pa.array([None if x % 7 == 0 else int(x) for x in rng.integers(0, 10 ** 6, n)], pa.int64())
    table = pa.table({"p": p, "q": q, "r": r, "i": i, "b": b})
    # several chunks with offsets, as a scan of several tablets gives
    return pa.concat_tables([table.slice(0, n // 3), table.slice(n // 3)])


@pytest.mark.parametrize("sql", _CHAIN)
def test_chains_match_the_arrow_path(sql, monkeypatch):
    batch = _batch(np.random.default_rng(len(sql)), 500)
    fast = evaluate_many([parse(sql)], batch, CTX)[0]
    with monkeypatch.context() as m:
        m.setattr(decimal_int64, "arith_unscaled", lambda *args: None)
        slow = evaluate_many([parse(sql)], batch, CTX)[0]
    assert fast.type == slow.type and fast.to_pylist() == slow.to_pylist()


def test_raw_results_stay_int64():
    batch = _batch(np.random.default_rng(1), 100)
    value = evaluate_many([parse("p * (1 - q)")], batch, CTX, raw=True)[0]
    assert isinstance(value, Unscaled)
    assert value.to_arrow().to_pylist() == evaluate_many([parse("p * (1 - q)")], batch,
                                                         CTX)[0].to_pylist()


def test_common_subexpressions_are_computed_once(monkeypatch):
    batch = _batch(np.random.default_rng(2), 100)
    calls = []
    real = decimal_int64.arith_unscaled
    monkeypatch.setattr(decimal_int64, "arith_unscaled",
                        lambda *args: calls.append(args[0]) or real(*args))
    exprs = [parse("p * (1 - q)"), parse("p * (1 - q) * (1 + r)")]
    evaluate_many(exprs, batch, CTX)
    assert calls == ["-", "*", "+", "*"]  # 1 - q and p * (...) once each


def test_nondeterministic_calls_are_not_shared():
    batch = pa.table({"x": pa.array(range(50))})
    a, b = evaluate_many([parse("rand() + 1"), parse("rand() + 1")], batch, CTX)
    assert a.to_pylist() != b.to_pylist()


def test_a_frame_and_its_lazy_decimals_form_no_reference_cycle():
    """A frame's lazy DECIMAL column must not hold the frame: the cycle kept every DECIMAL
    column a query read alive until the (rarely run) cyclic collector came, ~300 MB per TPC-H
    Q1 at SF 1 (server/gc_tuning.py)."""
    import gc

    from executor.expressions.context import EvalContext, Frame

    batch = pa.table({"d": pa.chunked_array([[Decimal("1.10"), Decimal("2.20")],
                                              [Decimal("3.30")]], pa.decimal128(10, 2))})
    gc.collect()
    gc.disable()
    try:
        frame = Frame(batch, EvalContext(), lambda node, f: None)
        lazy = frame.lazy_decimal("d")
        assert lazy.values.tolist() == [110, 220, 330]
        assert lazy.to_arrow().to_pylist() == [Decimal("1.10"), Decimal("2.20"), Decimal("3.30")]
        assert lazy.to_arrow() is frame.column("d")  # combined once, for both
        del frame, lazy
        assert gc.collect() == 0
    finally:
        gc.enable()
