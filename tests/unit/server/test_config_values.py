"""server/config.py: settings of a fixed set of values are checked at start-up."""

import pytest

from server.config import load_config


def test_python_cpu_affinity_is_auto_by_default_and_none_turns_it_off(tmp_path):
    conf = tmp_path / "minidoris.conf"
    conf.write_text("query_port = 9030\n")
    assert load_config(conf).python_cpu_affinity == "auto"
    conf.write_text("python_cpu_affinity = none  # threads where the OS puts them\n")
    assert load_config(conf).python_cpu_affinity == "none"


def test_a_bad_python_cpu_affinity_is_refused(tmp_path):
    conf = tmp_path / "minidoris.conf"
    conf.write_text("python_cpu_affinity = always\n")
    with pytest.raises(ValueError, match="python_cpu_affinity: expected auto or none"):
        load_config(conf)
