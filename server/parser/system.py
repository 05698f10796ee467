"""Parsers for the cluster statements: ALTER SYSTEM ... BACKEND, CANCEL DECOMMISSION BACKEND,
SHOW BACKENDS and SHOW PROC '/path'.

    ALTER SYSTEM ADD BACKEND "host:heartbeat_port"[, "host:heartbeat_port" ...]
    ALTER SYSTEM DECOMMISSION BACKEND "host:heartbeat_port"[, ...]
    ALTER SYSTEM DROP | DROPP BACKEND "host:heartbeat_port"[, ...]
    CANCEL DECOMMISSION BACKEND "host:heartbeat_port"[, ...]
    SHOW BACKENDS
    SHOW PROC '/backends' | '/colocation_group' | '/colocation_group/<GroupId>'
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.statements import AlterSystemStmt, ShowBackendsStmt, ShowProcStmt
from server.parser.tokens import TokenCursor

_ACTIONS = ("ADD", "DECOMMISSION", "DROPP", "DROP")


def _host_ports(cur: TokenCursor) -> list[str]:
    out = [cur.string("\"host:port\"")]
    while cur.accept_type(TokenType.COMMA):
        out.append(cur.string("\"host:port\""))
    cur.expect_end()
    return out


def parse_alter_system(cur: TokenCursor) -> AlterSystemStmt:
    cur.expect("ALTER", "SYSTEM")
    action = next((a for a in _ACTIONS if cur.accept(a)), None)
    if action is None:
        raise cur.error("Expected ADD, DECOMMISSION, DROP or DROPP")
    cur.expect("BACKEND")
    return AlterSystemStmt(action, _host_ports(cur))


def parse_cancel_decommission(cur: TokenCursor) -> AlterSystemStmt:
    cur.expect("CANCEL", "DECOMMISSION", "BACKEND")
    return AlterSystemStmt("CANCEL_DECOMMISSION", _host_ports(cur))


def parse_show_backends(cur: TokenCursor) -> ShowBackendsStmt:
    cur.expect("SHOW", "BACKENDS")
    cur.expect_end()
    return ShowBackendsStmt()


def parse_show_proc(cur: TokenCursor) -> ShowProcStmt:
    cur.expect("SHOW", "PROC")
    path = cur.string("proc path")
    cur.expect_end()
    return ShowProcStmt(path)


OWN_PARSERS = (
    (("ALTER", "SYSTEM"), parse_alter_system),
    (("CANCEL", "DECOMMISSION"), parse_cancel_decommission),
    (("SHOW", "BACKENDS"), parse_show_backends),
    (("SHOW", "PROC"), parse_show_proc),
)
