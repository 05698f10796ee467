-- Star Schema Benchmark tables for minidoris, written as Doris users write them (modelled on
-- the DDL of Doris's tools/ssb-tools for SF1): the fact table range-partitioned by year on its
-- yyyymmdd order date, every table DUPLICATE KEY and hash-distributed on its key. The date
-- dimension is called `dates`, as in Doris's tools (DATE is a keyword). Bucket counts suit a
-- 2-core machine at SF 0.01-1; Doris's own SF1 DDL uses 48 buckets for lineorder. The fact
-- table's sort key leads with its date (as Doris's TPC-H lineitem does with l_shipdate), which
-- also makes the partition column a key column: Doris accepts a non-key partition column in a
-- DUPLICATE KEY table, minidoris does not yet.

CREATE TABLE lineorder (
    lo_orderdate     INT(11) NOT NULL,
    lo_orderkey      INT(11) NOT NULL,
    lo_linenumber    INT(11) NOT NULL,
    lo_custkey       INT(11) NOT NULL,
    lo_partkey       INT(11) NOT NULL,
    lo_suppkey       INT(11) NOT NULL,
    lo_orderpriority VARCHAR(16) NOT NULL,
    lo_shippriority  INT(11) NOT NULL,
    lo_quantity      INT(11) NOT NULL,
    lo_extendedprice INT(11) NOT NULL,
    lo_ordtotalprice INT(11) NOT NULL,
    lo_discount      INT(11) NOT NULL,
    lo_revenue       INT(11) NOT NULL,
    lo_supplycost    INT(11) NOT NULL,
    lo_tax           INT(11) NOT NULL,
    lo_commitdate    INT(11) NOT NULL,
    lo_shipmode      VARCHAR(11) NOT NULL
) ENGINE=OLAP
DUPLICATE KEY(`lo_orderdate`, `lo_orderkey`)
PARTITION BY RANGE(`lo_orderdate`) (
    PARTITION p1 VALUES [("-2147483648"), ("19930101")),
    PARTITION p2 VALUES [("19930101"), ("19940101")),
    PARTITION p3 VALUES [("19940101"), ("19950101")),
    PARTITION p4 VALUES [("19950101"), ("19960101")),
    PARTITION p5 VALUES [("19960101"), ("19970101")),
    PARTITION p6 VALUES [("19970101"), ("19980101")),
    PARTITION p7 VALUES [("19980101"), ("19990101"))
)
DISTRIBUTED BY HASH(`lo_orderkey`) BUCKETS 4
PROPERTIES ("replication_num" = "1");

CREATE TABLE customer (
    c_custkey    INT(11) NOT NULL,
    c_name       VARCHAR(26) NOT NULL,
    c_address    VARCHAR(41) NOT NULL,
    c_city       VARCHAR(11) NOT NULL,
    c_nation     VARCHAR(16) NOT NULL,
    c_region     VARCHAR(13) NOT NULL,
    c_phone      VARCHAR(16) NOT NULL,
    c_mktsegment VARCHAR(11) NOT NULL
) ENGINE=OLAP
DUPLICATE KEY(`c_custkey`)
DISTRIBUTED BY HASH(`c_custkey`) BUCKETS 4
PROPERTIES ("replication_num" = "1");

CREATE TABLE dates (
    d_datekey          INT(11) NOT NULL,
    d_date             VARCHAR(20) NOT NULL,
    d_dayofweek        VARCHAR(10) NOT NULL,
    d_month            VARCHAR(11) NOT NULL,
    d_year             INT(11) NOT NULL,
    d_yearmonthnum     INT(11) NOT NULL,
    d_yearmonth        VARCHAR(9) NOT NULL,
    d_daynuminweek     INT(11) NOT NULL,
    d_daynuminmonth    INT(11) NOT NULL,
    d_daynuminyear     INT(11) NOT NULL,
    d_monthnuminyear   INT(11) NOT NULL,
    d_weeknuminyear    INT(11) NOT NULL,
    d_sellingseason    VARCHAR(14) NOT NULL,
    d_lastdayinweekfl  INT(11) NOT NULL,
    d_lastdayinmonthfl INT(11) NOT NULL,
    d_holidayfl        INT(11) NOT NULL,
    d_weekdayfl        INT(11) NOT NULL
) ENGINE=OLAP
DUPLICATE KEY(`d_datekey`)
DISTRIBUTED BY HASH(`d_datekey`) BUCKETS 1
PROPERTIES ("replication_num" = "1");

CREATE TABLE supplier (
    s_suppkey INT(11) NOT NULL,
    s_name    VARCHAR(26) NOT NULL,
    s_address VARCHAR(26) NOT NULL,
    s_city    VARCHAR(11) NOT NULL,
    s_nation  VARCHAR(16) NOT NULL,
    s_region  VARCHAR(13) NOT NULL,
    s_phone   VARCHAR(16) NOT NULL
) ENGINE=OLAP
DUPLICATE KEY(`s_suppkey`)
DISTRIBUTED BY HASH(`s_suppkey`) BUCKETS 2
PROPERTIES ("replication_num" = "1");

CREATE TABLE part (
    p_partkey   INT(11) NOT NULL,
    p_name      VARCHAR(23) NOT NULL,
    p_mfgr      VARCHAR(7) NOT NULL,
    p_category  VARCHAR(8) NOT NULL,
    p_brand     VARCHAR(10) NOT NULL,
    p_color     VARCHAR(12) NOT NULL,
    p_type      VARCHAR(26) NOT NULL,
    p_size      INT(11) NOT NULL,
    p_container VARCHAR(11) NOT NULL
) ENGINE=OLAP
DUPLICATE KEY(`p_partkey`)
DISTRIBUTED BY HASH(`p_partkey`) BUCKETS 4
PROPERTIES ("replication_num" = "1");
