"""Inverted indexes: the parsers' analysis, MATCH semantics over token lists, the per-segment
term dictionary + bitmaps (in the segment and in side files), and scans pruned by it."""

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap
from storage_testutil import column, table_for, write_and_open

from storage import ScanStats, TabletSchema
from storage.inverted import filter as inverted_filter
from storage.inverted import index as inverted_index
from storage.inverted.analyzer import Analyzer
from storage.inverted.filter import MatchFilter
from storage.inverted.match import KINDS, evaluate
from storage.segment import page, side_index
from storage.segment.reader import IndexOptions
from storage.segment.writer import SegmentOptions

TEXT = pa.array(["GET /index.html HTTP/1.1", None, "", "Apache Doris 是数据库", "doris_fe, DORIS!",
                 "error: disk full", "Disk error again"])


@pytest.mark.parametrize("parser, lower, row0, row3, row4", [
    ("english", None, ["get", "index", "html", "http", "1", "1"], ["apache", "doris"],
     ["doris", "fe", "doris"]),
    ("english", False, ["GET", "index", "html", "HTTP", "1", "1"], ["Apache", "Doris"],
     ["doris", "fe", "DORIS"]),
    ("unicode", None, ["get", "index", "html", "http", "1", "1"],
     ["apache", "doris", "是", "数", "据", "库"], ["doris", "fe", "doris"]),
    ("chinese", None, ["get", "index", "html", "http", "1", "1"],
     ["apache", "doris", "是", "数", "据", "库"], ["doris", "fe", "doris"]),
    ("none", None, ["GET /index.html HTTP/1.1"], ["Apache Doris 是数据库"], ["doris_fe, DORIS!"]),
    ("none", True, ["get /index.html http/1.1"], ["apache doris 是数据库"], ["doris_fe, doris!"]),
])
def test_parsers(parser, lower, row0, row3, row4):
    lists = Analyzer(parser, lower).tokens(TEXT).to_pylist()
    assert lists[0] == row0 and lists[3] == row3 and lists[4] == row4
    assert lists[1] is None and lists[2] == []


def test_analyzer_of_properties_defaults():
    assert Analyzer.of(None) == Analyzer("none", None) and not Analyzer.of({}).lowers
    assert Analyzer.of({"parser": "english"}).lowers
    assert not Analyzer.of({"parser": "english", "lower_case": "false"}).lowers


def test_match_kinds():
    english = Analyzer("english")

    def rows(kind, q):
        got = evaluate(kind, TEXT, q, english).to_pylist()
        assert got[1] is None
        return [i for i, v in enumerate(got) if v]

    assert rows("match_any", "DISK apache") == [3, 5, 6]
    assert rows("match_all", "error disk") == [5, 6]
    assert rows("match_phrase", "disk error") == [6]
    assert rows("match_phrase", "error disk") == [5]
    assert rows("match_phrase_prefix", "disk f") == [5]
    assert rows("match_phrase_prefix", "ind") == [0]
    assert rows("match_regexp", "^d.s") == [5, 6]
    assert rows("match_any", "  ,, ") == []  # no query terms: no row


def _index(values, props, page_size=64):
    pages: list[bytes] = []

    def write_page(data: bytes):
        pages.append(data)
        return len(pages) - 1, len(data)

    meta = inverted_index.write(pa.array(values), 7, props, page_size, True, write_page)

    def load(pointer, page_type):
        return page.parse(pa.py_buffer(pages[pointer[0]]), page_type, {})

    return inverted_index.InvertedIndex(meta, len(values)), load, meta


@pytest.mark.parametrize("kind", KINDS)
def test_index_answers_contain_the_exact_rows(kind):
    rng = np.random.default_rng(3)
    words = np.array(["alpha", "Beta", "gamma", "delta", "eps", "zeta", "eta", "theta"])
    values = [None if rng.random() < 0.05 else " ".join(rng.choice(words, rng.integers(0, 6)))
              for _ in range(400)]
    props = {"parser": "english"}
    index, load, meta = _index(values, props)
    assert meta["index_id"] == 7 and meta["properties"] == props
    assert len(meta["dict_pages"]) >= 1 and len(meta["bitmap_pages"]) > 1
    for q in ["beta", "alpha gamma", "zeta eta", "the", "nothing here", "^[ab]"]:
        exact = evaluate(kind, pa.array(values), q, Analyzer.of(props)).to_pylist()
        want = {i for i, v in enumerate(exact) if v}
        got = set(index.rows(kind, q, load))
        assert want <= got, (kind, q)
        if kind not in ("match_phrase", "match_phrase_prefix"):
            assert got == want, (kind, q)


def test_terms_and_null_bitmap():
    uniq, blobs = inverted_index.build(pa.array(["b a b", None, "a", ""]), Analyzer("english"))
    assert uniq.to_pylist() == ["a", "b"]
    assert [list(BitMap.deserialize(b)) for b in blobs] == [[0, 2], [0], [1]]


def _schema(with_index: bool) -> TabletSchema:
    inverted = {"msg": {"index_id": 9, "properties": {"parser": "english"}}} if with_index else {}
    return TabletSchema([column("k", "INT", key=True), column("msg", "STRING")], "DUP_KEYS",
                        inverted_indexes=inverted)


def _scan(reader, filters, options):
    stats = ScanStats()
    with inverted_filter.using(filters):
        table = reader.read(["k"], [], stats, indexes=options)
    return table.column("k").to_pylist(), stats


def test_segment_scan_uses_the_index_in_the_file_and_in_side_files(tmp_path):
    n = 5000
    data = {"k": list(range(n)),
            "msg": [f"request {i} {'boom' if i % 100 == 7 else 'ok'}" for i in range(n)]}
    sch = _schema(True)
    reader = write_and_open(tmp_path, sch, table_for(sch, data), page_size=4096)
    assert reader.columns["msg"].inverted_index_id == 9
    options = IndexOptions(inverted=(("msg", 9, None),))
    got, stats = _scan(reader, [MatchFilter("msg", "match_any", "BOOM")], options)
    assert got == list(range(7, n, 100)) and stats.rows_inverted_index_filtered == n - 50
    got, stats = _scan(reader, [MatchFilter("msg", "match_all", "boom nothing")], options)
    assert got == [] and stats.rows_read == 0
    # another index id (dropped and added again): the in-file index is not used
    got, stats = _scan(reader, [MatchFilter("msg", "match_any", "boom")],
                       IndexOptions(inverted=(("msg", 10, None),)))
    assert len(got) == n and stats.rows_inverted_index_filtered == 0

    # a segment written without the index (older format) gets a side file from BUILD INDEX
    old = write_and_open(tmp_path, _schema(False), table_for(sch, data), name="2_0.dat")
    assert old.columns["msg"].inverted_index_id is None
    path = str(tmp_path / side_index.file_name(2, 0, 9))
    spec = {"index_id": 9, "properties": {"parser": "english"}}
    side_index.write(path, pa.array(data["msg"]), "msg", sch.column("msg").type,
                     SegmentOptions(), spec)
    options = IndexOptions(inverted=(("msg", 9, path),))
    got, stats = _scan(old, [MatchFilter("msg", "match_any", "boom")], options)
    assert got == list(range(7, n, 100)) and stats.rows_inverted_index_filtered == n - 50
    missing = IndexOptions(inverted=(("msg", 9, str(tmp_path / "none.idx")),))
    got, _ = _scan(old, [MatchFilter("msg", "match_any", "boom")], missing)
    assert len(got) == n  # no index anywhere: read whole (the MATCH filter above decides)


def test_schema_roundtrip_keeps_inverted_indexes():
    sch = _schema(True)
    again = TabletSchema.from_dict(sch.to_dict())
    assert again.inverted_indexes == sch.inverted_indexes
    assert "inverted_indexes" not in _schema(False).to_dict()  # older metas unchanged
