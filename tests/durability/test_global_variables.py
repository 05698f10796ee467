"""SET GLOBAL survives a restart (Doris keeps global variables in its edit log and image); a
session's own SET does not. Through the journal after kill -9, and through the image when the
journal has been rolled into one."""

from __future__ import annotations

import pytest


def _values(conn, *names):
    with conn.cursor() as cur:
        cur.execute("SELECT " + ", ".join(f"@@{n}" for n in names))
        return cur.fetchone()


def _set(conn, *statements):
    with conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)


@pytest.mark.parametrize("roll", [1000, 2], ids=["journal", "image"])
def test_set_global_survives_restart(server_factory, tmp_path, roll):
    conf = tmp_path / "fe.conf"
    conf.write_text(f"edit_log_roll_num = {roll}\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    _set(conn, "SET GLOBAL query_timeout = 123", "SET GLOBAL time_zone = 'Asia/Shanghai'",
         "SET @@global.enable_profile = true", "SET GLOBAL sql_mode = ''",
         "SET GLOBAL exec_mem_limit = 1073741824", "SET GLOBAL exec_mem_limit = DEFAULT",
         "SET GLOBAL cbo_net_weight = 2.5", "SET GLOBAL auto_analyze_start_time = '01:00:00'",
         "SET insert_timeout = 77")  # the session's own value: not kept
    names = ("query_timeout", "time_zone", "enable_profile", "sql_mode", "exec_mem_limit",
             "cbo_net_weight", "auto_analyze_start_time", "insert_timeout")
    before = _values(conn, *names)
    assert before == (123, "Asia/Shanghai", 1, "", 2147483648, 2.5, "01:00:00", 77)
    srv.kill9()
    srv.start()
    conn = srv.connect()
    assert _values(conn, *names) == (123, "Asia/Shanghai", 1, "", 2147483648, 2.5, "01:00:00",
                                     14400)
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES LIKE 'query_timeout'")
        assert cur.fetchall() == (("query_timeout", "123", "900", "1"),)
    # a bad SET GLOBAL changes nothing, before or after a restart
    with pytest.raises(Exception, match="1193"):
        _set(conn, "SET GLOBAL no_such_variable = 1")
    srv.stop()
    srv.start()
    assert _values(srv.connect(), "query_timeout", "time_zone") == (123, "Asia/Shanghai")
