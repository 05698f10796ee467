"""storage/point_lookup.lookup on narrow integer keys: the probe is searched as a scalar of the
keys' dtype (no cast of the key array per search) and finds exactly the rows a scan finds,
for keys at the type's bounds, negative keys, and absent keys."""

import tempfile

import numpy as np
import pytest
from storage_testutil import column, schema, table_for

from storage import ColumnPredicate as P
from storage import ScanStats, StorageEngine
from storage.point_lookup import _of_dtype, lookup

SMALL = schema([column("k", "SMALLINT", key=True, nullable=False), column("v", "INT")])


@pytest.fixture(scope="module")
def tablet():
    with tempfile.TemporaryDirectory() as tmp:
        t = StorageEngine(tmp, page_cache_bytes=64 << 20).create_tablet(1, SMALL)
        keys = [-32768, -5, -5, 0, 7, 300, 32767]
        t.publish(t.write_rowset(table_for(SMALL, {"k": keys, "v": list(range(len(keys)))}), 2),
                  2)
        yield t


@pytest.mark.parametrize("key", [-32768, -5, 0, 7, 8, 300, 32767, -1])
def test_lookup_equals_scan(tablet, key):
    snapshot = tablet.capture(2)
    try:
        preds = [P("k", "=", (key,))]
        got = lookup(snapshot, ["k", "v"], preds, ScanStats())
        want = snapshot.read(["k", "v"], preds, ScanStats())
        assert got is not None and got.to_pylist() == want.to_pylist()
    finally:
        snapshot.release()


def test_probe_as_the_keys_dtype():
    assert type(_of_dtype(5, np.dtype(np.int16))) is np.int16
    assert _of_dtype(40_000, np.dtype(np.int16)) is None
    assert _of_dtype(-1, np.dtype(np.uint8)) is None
    assert _of_dtype("x", np.dtype(object)) == "x"
