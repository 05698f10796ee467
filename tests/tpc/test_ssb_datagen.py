"""The SSB generator derives LINEORDER chunk by chunk (bounded memory at SF 30); the chunks
must add up to exactly the table derived in one piece, which the cached data and the other
tests were made from."""

from __future__ import annotations

import pyarrow.parquet as pq

from scripts.bench.datagen.ssb import SSB_TABLES, _read_generated, _tpchgen, generate_ssb

SF = 0.05


def test_tpchgen_parts_do_not_align_by_order_key(tmp_path):
    """Why `_OrdersWindow` exists: LINEITEM's part 1 ends at another order key than ORDERS's."""
    _tpchgen(SF, ("lineitem",), tmp_path / "l", parts=5, part=1)
    _tpchgen(SF, ("orders",), tmp_path / "o", parts=5, part=1)
    last_item = _read_generated(tmp_path / "l", "lineitem")["l_orderkey"][-1].as_py()
    last_order = _read_generated(tmp_path / "o", "orders")["o_orderkey"][-1].as_py()
    assert last_item != last_order


def test_lineorder_in_parts_equals_one_piece(tmp_path):
    whole = generate_ssb(SF, tmp_path / "one", parts=1)
    chunked = generate_ssb(SF, tmp_path / "five", parts=5)
    assert pq.ParquetFile(chunked / "lineorder.parquet").metadata.num_row_groups >= 5
    for name in SSB_TABLES:
        a = pq.read_table(whole / f"{name}.parquet")
        b = pq.read_table(chunked / f"{name}.parquet")
        assert a.num_rows > 0 and a.schema == b.schema
        assert a.equals(b), name
