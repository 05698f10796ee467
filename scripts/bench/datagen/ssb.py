"""Star Schema Benchmark data, derived deterministically from TPC-H data of the same scale.

SSB (O'Neil et al., "Star Schema Benchmark", rev. 3) is TPC-H denormalised: LINEORDER is
LINEITEM joined with ORDERS, and the dimensions carry their nation/region names and a city. Its
own dbgen fills some fields at random; here every field is a function of the TPC-H rows that
`tpchgen-cli` produces (and of a fixed integer hash where SSB draws at random), computed with
numpy/pyarrow kernels, so a scale factor always yields the same tables. Per table:

- lineorder: one row per TPC-H lineitem. lo_orderkey/linenumber/partkey/suppkey/quantity/shipmode
  copied; lo_custkey, lo_orderpriority, lo_shippriority, lo_ordtotalprice from its order; dates
  as yyyymmdd integers (lo_orderdate = o_orderdate, lo_commitdate = l_commitdate); money in
  cents as SSB's integers: lo_extendedprice = l_extendedprice * 100, lo_ordtotalprice =
  o_totalprice * 100, lo_discount = l_discount * 100 (0..10), lo_tax = l_tax * 100 (0..8),
  lo_revenue = lo_extendedprice * (100 - lo_discount) / 100 and lo_supplycost = 6 * (unit retail
  price) / 10, both truncated as in SSB's dbgen.
- customer, supplier: TPC-H rows with c_nation/c_region (s_...) names; the city is the nation
  name cut or space-padded to 9 characters plus a digit 0-9 (SSB's rule: 'UNITED KI1'), the
  digit taken from a hash of the key (SSB's dbgen draws it at random). s_address is cut to 25
  characters (SSB's width).
- part: p_name = the first two words (colours) of TPC-H's p_name, p_color its first word,
  p_mfgr 'MFGR#m' and p_category 'MFGR#mc' from TPC-H's 'Manufacturer#m' and 'Brand#mc',
  p_brand = p_category followed by 1..40 from a hash of the key (SSB: random), e.g. 'MFGR#2221';
  p_type, p_size, p_container copied.
- dates: one row per day from 1992-01-01 to 1998-12-31 with SSB's columns (d_yearmonth 'Dec1997',
  d_daynuminweek 1 = Sunday, d_weeknuminyear = (day of year - 1) / 7 + 1, selling seasons
  Christmas/Winter/Spring/Summer/Fall, holidays Jan 1, Jul 4, Dec 25).

Departure from SSB's sizes: the dimensions keep TPC-H's row counts (customer 150,000 x SF, SSB
30,000 x SF; supplier 10,000 x SF, SSB 2,000 x SF) so that every key of the derived fact table
resolves; LINEORDER has SSB's size (~6,000,000 x SF) and the queries' selectivities are SSB's.
"""

from __future__ import annotations

import datetime as dt
import math
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from scripts.bench.datagen.tpch import read_raw, sf_label, tpchgen_executable
from scripts.bench.schema import arrow_schemas, cast_to_schema

SSB_TABLES = ("lineorder", "customer", "supplier", "part", "dates")
# The hash salts of the city digits. Q3.4 (two cities of one nation, one month) selects ~8e-7 of
# LINEORDER, about one row per 1.2 million: these salts were picked among the first few so that
# Q3.4 is non-empty at SF 0.1, the scale of the tests (1 row; at SF 1, 2 rows).
CUSTOMER_CITY_SALT, SUPPLIER_CITY_SALT = 4, 104
PART_BRAND_SALT = 3
FIRST_DAY, LAST_DAY = dt.date(1992, 1, 1), dt.date(1998, 12, 31)


def key_hash(keys: np.ndarray, salt: int) -> np.ndarray:
    """A fixed 64-bit mix (splitmix64's finaliser) of integer keys: SSB's random draws, made
    reproducible."""
    with np.errstate(over="ignore"):
        x = keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(salt)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def _np(col) -> np.ndarray:
    return col.to_numpy() if isinstance(col, (pa.Array, pa.ChunkedArray)) else np.asarray(col)


def _cents(col) -> np.ndarray:
    """DECIMAL(15, 2) dollars -> int64 cents (exact: the float is rounded back to an integer)."""
    return np.rint(_np(col.cast(pa.float64())) * 100).astype(np.int64)


def _yyyymmdd(dates) -> np.ndarray:
    return (_np(pc.year(dates)) * 10000 + _np(pc.month(dates)) * 100
            + _np(pc.day(dates))).astype(np.int32)


def _digits(values: np.ndarray) -> pa.Array:
    return pa.array(values.astype(np.int64)).cast(pa.string())


def _city(nation_names: pa.Array, keys: np.ndarray, salt: int) -> pa.Array:
    prefix = pc.utf8_rpad(pc.utf8_slice_codeunits(nation_names, 0, 9), width=9, padding=" ")
    return pc.binary_join_element_wise(prefix, _digits(key_hash(keys, salt) % np.uint64(10)), "")


def _nation_names(nation: pa.Table, region: pa.Table) -> tuple[pa.Array, pa.Array]:
    """Arrays indexed by nation key: the nation's name and its region's name."""
    order = np.argsort(_np(nation["n_nationkey"]))
    names = nation["n_name"].combine_chunks().cast(pa.string()).take(order)
    rkeys = _np(nation["n_regionkey"])[order]
    r_order = np.argsort(_np(region["r_regionkey"]))
    r_names = region["r_name"].combine_chunks().cast(pa.string()).take(r_order)
    return names, r_names.take(pa.array(np.searchsorted(_np(region["r_regionkey"])[r_order], rkeys)))


def lineorder(lineitem: pa.Table, orders: pa.Table) -> pa.Table:
    okeys = _np(orders["o_orderkey"])
    order = np.argsort(okeys, kind="stable")
    idx = order[np.searchsorted(okeys[order], _np(lineitem["l_orderkey"]))]
    take = pa.array(idx)
    quantity = _np(lineitem["l_quantity"].cast(pa.float64())).round().astype(np.int64)
    extended = _cents(lineitem["l_extendedprice"])
    discount = _cents(lineitem["l_discount"])
    unit_price = extended // quantity  # TPC-H: l_extendedprice = l_quantity * p_retailprice
    return pa.table({
        "lo_orderkey": lineitem["l_orderkey"],
        "lo_linenumber": lineitem["l_linenumber"],
        "lo_custkey": orders["o_custkey"].take(take),
        "lo_partkey": lineitem["l_partkey"],
        "lo_suppkey": lineitem["l_suppkey"],
        "lo_orderdate": _yyyymmdd(orders["o_orderdate"].take(take)),
        "lo_orderpriority": orders["o_orderpriority"].take(take),
        "lo_shippriority": orders["o_shippriority"].take(take),
        "lo_quantity": quantity,
        "lo_extendedprice": extended,
        "lo_ordtotalprice": _cents(orders["o_totalprice"].take(take)),
        "lo_discount": discount,
        "lo_revenue": extended * (100 - discount) // 100,
        "lo_supplycost": 6 * unit_price // 10,
        "lo_tax": _cents(lineitem["l_tax"]),
        "lo_commitdate": _yyyymmdd(lineitem["l_commitdate"]),
        "lo_shipmode": lineitem["l_shipmode"],
    })


def customer(tpch_customer: pa.Table, nation_names: pa.Array, region_names: pa.Array) -> pa.Table:
    c = tpch_customer
    nk = pa.array(_np(c["c_nationkey"]))
    nation = nation_names.take(nk)
    return pa.table({
        "c_custkey": c["c_custkey"], "c_name": c["c_name"], "c_address": c["c_address"],
        "c_city": _city(nation, _np(c["c_custkey"]), salt=CUSTOMER_CITY_SALT), "c_nation": nation,
        "c_region": region_names.take(nk), "c_phone": c["c_phone"],
        "c_mktsegment": c["c_mktsegment"],
    })


def supplier(tpch_supplier: pa.Table, nation_names: pa.Array, region_names: pa.Array) -> pa.Table:
    s = tpch_supplier
    nk = pa.array(_np(s["s_nationkey"]))
    nation = nation_names.take(nk)
    return pa.table({
        "s_suppkey": s["s_suppkey"], "s_name": s["s_name"],
        "s_address": pc.utf8_slice_codeunits(s["s_address"].cast(pa.string()), 0, 25),
        "s_city": _city(nation, _np(s["s_suppkey"]), salt=SUPPLIER_CITY_SALT), "s_nation": nation,
        "s_region": region_names.take(nk), "s_phone": s["s_phone"],
    })


def part(tpch_part: pa.Table) -> pa.Table:
    p = tpch_part
    name = p["p_name"].combine_chunks()
    two_words = pc.struct_field(pc.extract_regex(name, r"^(?P<w>\S+ \S+)"), [0])
    color = pc.struct_field(pc.extract_regex(name, r"^(?P<w>\S+)"), [0])
    mfgr = pc.binary_join_element_wise(
        "MFGR#", pc.utf8_slice_codeunits(p["p_mfgr"].cast(pa.string()), -1), "")
    category = pc.binary_join_element_wise(
        "MFGR#", pc.utf8_slice_codeunits(p["p_brand"].cast(pa.string()), 6, 8), "")
    brand_no = key_hash(_np(p["p_partkey"]), salt=PART_BRAND_SALT) % np.uint64(40) + np.uint64(1)
    return pa.table({
        "p_partkey": p["p_partkey"], "p_name": two_words, "p_mfgr": mfgr,
        "p_category": category,
        "p_brand": pc.binary_join_element_wise(category, _digits(brand_no), ""),
        "p_color": color, "p_type": p["p_type"], "p_size": p["p_size"],
        "p_container": p["p_container"],
    })


_SEASONS = np.array(["", "Winter", "Winter", "Spring", "Spring", "Spring", "Summer", "Summer",
                     "Summer", "Fall", "Fall", "Fall", "Christmas"], dtype=object)


def dates() -> pa.Table:
    days = np.arange(np.datetime64(FIRST_DAY), np.datetime64(LAST_DAY) + 1)
    d = pa.array(days.astype("datetime64[D]"), pa.date32())
    ts = d.cast(pa.timestamp("s"))
    year, month, day = _np(pc.year(d)), _np(pc.month(d)), _np(pc.day(d))
    doy = _np(pc.day_of_year(d))
    dow = _np(pc.day_of_week(d, count_from_zero=False, week_start=7))  # Sunday = 1
    month_name = pc.strftime(ts, format="%B")
    next_month = np.append(month[1:], 0)
    holiday = ((month == 1) & (day == 1)) | ((month == 7) & (day == 4)) | ((month == 12) & (day == 25))
    return pa.table({
        "d_datekey": year * 10000 + month * 100 + day,
        "d_date": pc.binary_join_element_wise(
            month_name, " ", _digits(day), ", ", _digits(year), ""),
        "d_dayofweek": pc.strftime(ts, format="%A"),
        "d_month": month_name,
        "d_year": year,
        "d_yearmonthnum": year * 100 + month,
        "d_yearmonth": pc.binary_join_element_wise(pc.strftime(ts, format="%b"), _digits(year), ""),
        "d_daynuminweek": dow,
        "d_daynuminmonth": day,
        "d_daynuminyear": doy,
        "d_monthnuminyear": month,
        "d_weeknuminyear": (doy - 1) // 7 + 1,
        "d_sellingseason": pa.array(_SEASONS[month], pa.string()),
        "d_lastdayinweekfl": (dow == 7).astype(np.int32),
        "d_lastdayinmonthfl": (month != next_month).astype(np.int32),
        "d_holidayfl": holiday.astype(np.int32),
        "d_weekdayfl": ((dow >= 2) & (dow <= 6)).astype(np.int32),
    })


# Rows of LINEITEM per chunk of the fact table (about SF 1's: ~1.5 GB of Arrow while derived).
LINEITEM_ROWS_PER_PART = 6_000_000
DIMENSION_TABLES = ("customer", "supplier", "part", "nation", "region")


def lineorder_parts(sf: float) -> int:
    """How many chunks LINEORDER is derived in: about SF 1 each (1 up to SF 1)."""
    return max(1, math.ceil(sf * 6_000_000 / LINEITEM_ROWS_PER_PART))


def _tpchgen(sf: float, tables: tuple[str, ...], out: Path, parts: int | None = None,
             part: int | None = None) -> None:
    command = [tpchgen_executable(), "parquet", "-s", sf_label(sf), "-o", str(out), "--quiet"]
    for table in tables:
        command += ["-T", table]
    if parts is not None:
        command += ["--parts", str(parts), "--part", str(part)]
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)


def _read_generated(directory: Path, table: str) -> pa.Table:
    """A table tpchgen-cli wrote under `directory`: `<table>.parquet`, or with --parts the
    file(s) under `<table>/`, in part order."""
    single = directory / f"{table}.parquet"
    if single.exists():
        return read_raw(directory, table)
    files = sorted((directory / table).glob("*.parquet"))
    if not files:
        raise RuntimeError(f"tpchgen-cli wrote no file for {table} under {directory}")
    return pa.concat_tables([read_raw(f.parent, f.name.removesuffix(".parquet")) for f in files])


class _OrdersWindow:
    """ORDERS read part by part, in order-key order, as LINEITEM's parts ask for them.

    tpchgen-cli cuts LINEITEM's parts by line-item count and ORDERS's by order count, so their
    key ranges do not coincide (SF 1 in 4 parts: lineitem part 1 ends at order 1,499,942, orders
    part 1 at 1,500,000); this keeps the orders from the first key still needed to the last part
    generated: at most about two parts."""

    def __init__(self, sf: float, parts: int, work: Path):
        self.sf, self.parts, self.work = sf, parts, work
        self.next_part, self.table = 1, None

    def covering(self, last_key: int) -> pa.Table:
        """The buffered orders, after generating parts until they reach order key `last_key`."""
        while self.table is None or _np(self.table["o_orderkey"])[-1] < last_key:
            if self.next_part > self.parts:
                raise RuntimeError(f"no order {last_key} in tpchgen-cli's ORDERS")
            chunk = self.work / f"orders-{self.next_part}"
            _tpchgen(self.sf, ("orders",), chunk, parts=self.parts, part=self.next_part)
            new = _read_generated(chunk, "orders")
            shutil.rmtree(chunk)
            self.table = new if self.table is None else pa.concat_tables([self.table, new])
            self.next_part += 1
        return self.table

    def drop_before(self, key: int) -> None:
        """Forget the orders below `key` (the next LINEITEM part starts at or after it)."""
        keep = int(np.searchsorted(_np(self.table["o_orderkey"]), key))
        self.table = self.table.slice(keep).combine_chunks()


def _write_lineorder(sf: float, path: Path, work: Path, parts: int, log) -> int:
    """LINEORDER at scale `sf` into one Parquet file, chunk by chunk: part k of tpchgen-cli's
    LINEITEM joined with the orders its keys need (`_OrdersWindow`) and appended as row groups;
    at most one part of LINEITEM and about two of ORDERS are in memory. The parts concatenated
    are tpchgen-cli's single file row for row, so the rows come out as from one file."""
    schema = arrow_schemas("ssb")["lineorder"]
    orders = _OrdersWindow(sf, parts, work)
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for k in range(1, parts + 1):
            chunk = work / f"lineitem-{k}"
            _tpchgen(sf, ("lineitem",), chunk, parts=parts, part=k)
            items = _read_generated(chunk, "lineitem")
            shutil.rmtree(chunk)
            keys = _np(items["l_orderkey"])
            table = cast_to_schema(lineorder(items, orders.covering(int(keys[-1]))), schema)
            orders.drop_before(int(keys[-1]))
            del items
            writer.write_table(table)
            rows += table.num_rows
            del table
            log(f"lineorder sf {sf_label(sf)}: part {k}/{parts}, {rows:,} rows")
    return rows


def generate_ssb(sf: float, cache_dir: Path, *, parts: int | None = None, log=None) -> Path:
    """Derive (or reuse) the SSB tables at scale `sf` as Parquet files; returns their directory.
    LINEORDER is derived in `parts` chunks (default `lineorder_parts(sf)`), so memory stays near
    one chunk's whatever the scale; the dimensions are small and derived whole."""
    out = Path(cache_dir) / f"ssb-sf{sf_label(sf)}"
    if (out / "DONE").exists():
        return out
    log = log or (lambda msg: None)
    parts = parts or lineorder_parts(sf)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".ssb-sf{sf_label(sf)}-", dir=out.parent))
    try:
        dims = tmp / "tpch-dimensions"
        _tpchgen(sf, DIMENSION_TABLES, dims)
        raw = {t: _read_generated(dims, t) for t in DIMENSION_TABLES}
        nation_names, region_names = _nation_names(raw["nation"], raw["region"])
        tables = {
            "customer": customer(raw["customer"], nation_names, region_names),
            "supplier": supplier(raw["supplier"], nation_names, region_names),
            "part": part(raw["part"]),
            "dates": dates(),
        }
        schemas = arrow_schemas("ssb")
        for name, table in tables.items():
            pq.write_table(cast_to_schema(table, schemas[name]), tmp / f"{name}.parquet")
        del raw, tables
        shutil.rmtree(dims)
        _write_lineorder(sf, tmp / "lineorder.parquet", tmp, parts, log)
        (tmp / "DONE").write_text(
            f"derived from tpchgen-cli parquet -s {sf_label(sf)} (lineorder in {parts} parts)\n")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def ssb_tables(sf: float, cache_dir: Path) -> dict[str, pa.Table]:
    """The SSB tables at scale `sf`, typed as in ddl/ssb.sql."""
    directory = generate_ssb(sf, cache_dir)
    return {name: pq.read_table(directory / f"{name}.parquet") for name in SSB_TABLES}
