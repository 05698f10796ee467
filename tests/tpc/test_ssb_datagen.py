"""The SSB generator derives LINEORDER chunk by chunk (bounded memory at SF 30); the chunks
must add up to exactly the table derived in one piece, which the cached data and the other
tests were made from."""

from __future__ import annotations

import pyarrow.parquet as pq

from scripts.bench.datagen.ssb import SSB_TABLES, _read_generated, _tpchgen, generate_ssb

# A scale where tpchgen-cli's parts disagree (the parts tried at SF 0.01 to 0.3 happened to end
# on the same order; at SF 0.5 in 4 parts LINEITEM's first ends at order 749,959 and ORDERS's
# at 749,988): 3M rows of LINEORDER, derived twice, ~30 s.
SF, PARTS = 0.5, 4


def test_tpchgen_parts_do_not_align_by_order_key(tmp_path):
    """Why `_OrdersWindow` exists: LINEITEM's part 1 ends at another order key than ORDERS's."""
    _tpchgen(SF, ("lineitem",), tmp_path / "l", parts=PARTS, part=1)
    _tpchgen(SF, ("orders",), tmp_path / "o", parts=PARTS, part=1)
    last_item = _read_generated(tmp_path / "l", "lineitem")["l_orderkey"][-1].as_py()
    last_order = _read_generated(tmp_path / "o", "orders")["o_orderkey"][-1].as_py()
    assert last_item != last_order


def test_lineorder_in_parts_equals_one_piece(tmp_path):
    whole = generate_ssb(SF, tmp_path / "one", parts=1)
    chunked = generate_ssb(SF, tmp_path / "parts", parts=PARTS)
    assert pq.ParquetFile(chunked / "lineorder.parquet").metadata.num_row_groups >= PARTS
    for name in SSB_TABLES:
        a = pq.read_table(whole / f"{name}.parquet")
        b = pq.read_table(chunked / f"{name}.parquet")
        assert a.num_rows > 0 and a.schema == b.schema
        assert a.equals(b), name
