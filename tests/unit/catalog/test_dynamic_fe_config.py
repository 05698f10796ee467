"""FE configs at runtime: listing, typed changes, Doris's errors, listeners."""

import pytest

from catalog.errors import DorisError
from catalog.fe_config import FeConfig
from server.config import Config


def test_initial_values_come_from_the_config_file_object():
    cfg = Config()
    cfg.dynamic_partition_check_interval_seconds = 30
    fe = FeConfig.from_object(cfg)
    assert fe.get("dynamic_partition_check_interval_seconds") == 30
    assert fe.get("dynamic_partition_enable") is True
    assert fe.get("max_dynamic_partition_num") == 500


def test_rows_have_doris_columns_and_filter():
    fe = FeConfig.from_object(Config())
    rows = fe.rows(lambda name: name.startswith("dynamic_partition"))
    assert rows == [("dynamic_partition_enable", "true", "boolean", "true", "true", ""),
                    ("dynamic_partition_check_interval_seconds", "600", "long", "true", "true", "")]
    names = [r[0] for r in fe.rows()]
    assert {"disable_colocate_join", "disable_colocate_balance", "disable_colocate_relocate",
            "max_dynamic_partition_num", "query_port"} <= set(names)


def test_set_validates_and_notifies():
    fe = FeConfig.from_object(Config())
    seen = []
    fe.on_change("dynamic_partition_check_interval_seconds", seen.append)
    fe.set("dynamic_partition_check_interval_seconds", "7200")
    assert fe.get("dynamic_partition_check_interval_seconds") == 7200 and seen == [7200]
    fe.set("dynamic_partition_enable", "FALSE")
    assert fe.get("dynamic_partition_enable") is False
    for key, value, message in [
            ("nope", "1", "Config 'nope' does not exist"),
            ("query_port", "1", "Config 'query_port' is not mutable"),
            ("dynamic_partition_enable", "yes", "Failed to set config 'dynamic_partition_enable'"),
            ("max_dynamic_partition_num", "9" * 20, "Failed to set config")]:
        with pytest.raises(DorisError, match=message):
            fe.set(key, value)
    assert seen == [7200]
