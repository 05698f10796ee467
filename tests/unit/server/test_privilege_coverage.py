"""Every statement the server dispatches has a privilege check (server/privileges.py) or is
listed as open / checked in its handler: a new statement type without one fails here."""

from __future__ import annotations

from server.dispatch import HANDLERS
from server.privileges import CHECKS, OPEN_OR_CHECKED_IN_HANDLER


def test_every_dispatched_statement_is_checked_or_listed():
    unchecked = {t.__name__ for t in HANDLERS if t not in CHECKS}
    assert unchecked - OPEN_OR_CHECKED_IN_HANDLER == set()
    assert OPEN_OR_CHECKED_IN_HANDLER - unchecked == set()  # no stale entry
