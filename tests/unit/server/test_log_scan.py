"""The end-of-session scan of server logs for internal errors (tests/conftest.py)."""

from __future__ import annotations

from server_process import tracebacks_in


def test_tracebacks_found_with_the_line_before(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "2026-11-25 INFO started\n"
        "2026-11-25 ERROR server.session: internal error running 'SELECT 1'\n"
        "Traceback (most recent call last):\n"
        '  File "planner/binder.py", line 1, in bind\n'
        "    raise KeyError('x')\n"
        "KeyError: 'x'\n"
        "2026-11-25 INFO Connection closed\n")
    found = tracebacks_in(log)
    assert len(found) == 1
    assert "internal error running 'SELECT 1'" in found[0]
    assert found[0].endswith("KeyError: 'x'")


def test_clean_or_missing_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("2026-11-25 INFO started\n")
    assert tracebacks_in(log) == []
    assert tracebacks_in(tmp_path / "absent.log") == []
