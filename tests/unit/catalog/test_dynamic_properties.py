"""dynamic_partition.* properties: defaults, normalisation, and every check (errors name the
property and carry Doris's error number)."""

import pytest

from catalog.create_table import new_table
from catalog.dynamic_periods import sorted_periods_text
from catalog.dynamic_properties import MIN_START, analyze, ordinal, read, system_time_zone
from catalog.errors import DorisError
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor

REQUIRED = {"dynamic_partition.time_unit": "DAY", "dynamic_partition.end": "3",
            "dynamic_partition.prefix": "p"}


def table(column: str = "k1 DATE", partition: str = "PARTITION BY RANGE(k1) ()"):
    sql = f"CREATE TABLE t ({column}, v INT) {partition} DISTRIBUTED BY HASH(k1) BUCKETS 5"
    return new_table(parse_create_table(TokenCursor(sql)), 1, 2)


def analyzed(given: dict, t=None, backends: int = 3, max_partitions: int = 500) -> dict:
    return analyze(t or table(), given, backends, max_partitions)


def error(given: dict, t=None, **kw) -> DorisError:
    with pytest.raises(DorisError) as e:
        analyzed(given, t, **kw)
    return e.value


def test_defaults_and_order():
    props = analyzed(dict(REQUIRED))
    assert list(props) == [
        "dynamic_partition.enable", "dynamic_partition.time_unit", "dynamic_partition.time_zone",
        "dynamic_partition.start", "dynamic_partition.end", "dynamic_partition.prefix",
        "dynamic_partition.buckets", "dynamic_partition.create_history_partition",
        "dynamic_partition.history_partition_num", "dynamic_partition.reserved_history_periods"]
    prop = read(props)
    assert prop.enable and prop.start == MIN_START == -2147483648 and prop.end == 3
    assert prop.buckets == 5  # the table's bucket count
    assert prop.time_zone == system_time_zone()
    assert not prop.create_history_partition and prop.history_partition_num == -1
    assert prop.reserved_history_periods == "NULL" and prop.replication_num is None
    assert prop.start_day_of_week == 1 and prop.start_day_of_month == 1


def test_values_are_normalised():
    props = analyzed({**REQUIRED, "dynamic_partition.time_unit": "week",
                      "dynamic_partition.enable": "TRUE",
                      "dynamic_partition.replication_num": "2"})
    assert props["dynamic_partition.time_unit"] == "WEEK"
    assert props["dynamic_partition.enable"] == "true"
    assert props["dynamic_partition.replication_allocation"] == "tag.location.default: 2"
    assert read(props).replication_num == 2


@pytest.mark.parametrize("missing", ["time_unit", "prefix", "end"])
def test_required(missing):
    given = {k: v for k, v in REQUIRED.items() if not k.endswith(missing)}
    assert error(given).message == f"Must assign dynamic_partition.{missing} properties"


@pytest.mark.parametrize("key, value, code, text", [
    ("time_unit", "MINUTE", 5065, "Unsupported time unit MINUTE. Expect HOUR/DAY/WEEK/MONTH/YEAR."),
    ("time_unit", "HOUR", 1105, "dynamic_partition.time_unit could not be HOUR when type of "
                                "partition column k1 is DATE or DATEV2"),
    ("start", "0", 5066, "Dynamic partition start must less than 0"),
    ("start", "-1.5", 5066, "Invalid dynamic partition start -1.5"),
    ("end", "-1", 5066, "Dynamic partition end must greater than 0"),
    ("end", "three", 5066, "Invalid dynamic partition end three"),
    ("prefix", "2p", 5069, "Invalid dynamic partition prefix: 2p."),
    ("buckets", "0", 5067, "Dynamic partition buckets must greater than 0"),
    ("buckets", "x", 5067, "Invalid dynamic partition buckets x"),
    ("enable", "on", 5068, "Invalid dynamic partition enable: on. Expected true or false"),
    ("time_zone", "Nowhere/City", 1298, "Unknown or incorrect time zone: 'Nowhere/City'"),
    ("start_day_of_week", "0", 1105, "dynamic_partition.start_day_of_week should between 1 and 7"),
    ("start_day_of_week", "x", 1105, "Invalid properties: dynamic_partition.start_day_of_week"),
    ("start_day_of_month", "29", 1105,
     "dynamic_partition.start_day_of_month should between 1 and 28"),
    ("create_history_partition", "1", 5074,
     "Invalid dynamic partition create_history_partition: 1. Expected true or false"),
    ("history_partition_num", "-2", 5075, "Dynamic history partition num must greater than 0"),
    ("history_partition_num", "x", 1105, "Invalid properties: dynamic_partition.history_partition_num"),
    ("replication_num", "0", 5071, "Dynamic partition replication num must greater than 0"),
    ("replication_num", "x", 5072, "Invalid dynamic partition replication num: x."),
    ("hot_partition_num", "-1", 1105, "dynamic_partition.hot_partition_num must larger than 0."),
    ("storage_medium", "TAPE", 1105, "invalid storage medium: TAPE. Should be SSD or HDD"),
    ("reserved_history_periods", "", 5076, "Dynamic reserved history periods is empty."),
    ("reserved_history_periods", "[2020-06-20,2020-06-01]", 5079,
     "The first date is larger than the second date, [2020-06-20,2020-06-01] is invalid."),
    ("foo", "1", 1105, "Invalid dynamic partition properties: dynamic_partition.foo"),
])
def test_each_check(key, value, code, text):
    e = error({**REQUIRED, f"dynamic_partition.{key}": value})
    assert (e.code, e.message) == (code, text)


@pytest.mark.parametrize("value", ["2020-06-01,2020-06-20", "[2020-06-01,]", "[,2020-06-01]",
                                   "[2020-06-01,2020-06-02],", "[2020-06-01, 2020-06-02]",
                                   "[2020-06-01 00:00:00,2020-06-02 00:00:00]"])
def test_reserved_history_periods_format(value):
    e = error({**REQUIRED, "dynamic_partition.reserved_history_periods": value})
    assert e.code == 5077 and "dynamic_partition.reserved_history_periods" in e.message


def test_reserved_history_periods_dates_must_exist():
    e = error({**REQUIRED, "dynamic_partition.reserved_history_periods": "[2020-02-30,2020-03-01]"})
    assert "It must be correct DATE value" in e.message


def test_reserved_history_periods_hour_form_and_sorting():
    t = table("k1 DATETIME")
    props = analyzed({**REQUIRED, "dynamic_partition.time_unit": "HOUR",
                      "dynamic_partition.reserved_history_periods":
                      "[2020-06-02 00:00:00,2020-06-02 03:00:00],[2020-06-01 00:00:00,2020-06-01 03:00:00]"}, t)
    prop = read(props)
    assert sorted_periods_text(prop.reserved_history_periods, "HOUR") == \
        "[2020-06-01 00:00:00,2020-06-01 03:00:00],[2020-06-02 00:00:00,2020-06-02 03:00:00]"
    e = error({**REQUIRED, "dynamic_partition.time_unit": "HOUR",
               "dynamic_partition.reserved_history_periods": "[2020-06-01,2020-06-02]"}, t)
    assert e.code == 5077


def test_only_single_column_range_on_date_datetime_or_integer():
    msg = "Dynamic partition only support single-column range partition"
    assert error(REQUIRED, table(partition="")).message == msg
    assert error(REQUIRED, table(partition="PARTITION BY LIST(k1) ()")).message == msg
    assert error(REQUIRED, table("k1 DATE, k2 INT", "PARTITION BY RANGE(k1, k2) ()")).message == msg
    assert "DATE, DATETIME and INTEGER" in error(REQUIRED, table("k1 VARCHAR(8)")).message
    assert read(analyzed(REQUIRED, table("k1 INT"))).time_unit == "DAY"
    assert "is Integer" in error({**REQUIRED, "dynamic_partition.time_unit": "HOUR"},
                                 table("k1 INT")).message


def test_too_many_partitions():
    e = error({**REQUIRED, "dynamic_partition.end": "501"})
    assert e.message == "Too many dynamic partitions: 501. Limit: 500"
    history = {**REQUIRED, "dynamic_partition.start": "-10", "dynamic_partition.end": "495",
               "dynamic_partition.create_history_partition": "true"}
    assert error(history).message == "Too many dynamic partitions: 505. Limit: 500"
    # history_partition_num narrows the history: max(start, -history_partition_num).
    assert analyzed({**history, "dynamic_partition.history_partition_num": "5"})
    # A disabled rule is not counted; a higher limit lets it through.
    assert analyzed({**REQUIRED, "dynamic_partition.end": "501", "dynamic_partition.enable": "false"})
    assert analyzed({**REQUIRED, "dynamic_partition.end": "501"}, max_partitions=1000)


def test_replication_num_needs_backends():
    e = error({**REQUIRED, "dynamic_partition.replication_num": "4"})
    assert "Failed to find enough backend" in e.message


def test_alter_merges_over_stored_values():
    t = table()
    t.properties.update(analyzed({**REQUIRED, "dynamic_partition.start": "-7"}, t))
    merged = analyze(t, {"dynamic_partition.end": "5"}, 3, 500)
    assert read(merged).start == -7 and read(merged).end == 5
    e = error({"dynamic_partition.start_day_of_month": "30"}, t)
    assert "start_day_of_month" in e.message


def test_ordinal():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 24, 28)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "24th", "28th"]
