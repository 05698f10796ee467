"""Arrow Flight SQL on `arrow_flight_sql_port` (Doris 2.1's fast path for Python clients).

A pyarrow.flight server in the same process, with the same users, sessions, parser, planner
and executor as the MySQL port:

    Handshake            HTTP Basic credentials (`authorization: Basic ...`, as ADBC sends
                         them) -> `authorization: Bearer <token>`; the token names a session
                         (a DorisSession: current database, variables) for later calls
    GetFlightInfo        CommandStatementQuery / CommandPreparedStatementQuery: the statement
                         runs (a query computes its first batch here, so errors and the schema
                         come back now); one endpoint whose ticket names the result
    DoGet                TicketStatementQuery: the result's batches, streamed as computed
    DoPut                CommandStatementUpdate: a DDL/DML statement; DoPutUpdateResult
    DoAction             CreatePreparedStatement (the dataset schema) / ClosePreparedStatement
    metadata             CommandGetCatalogs / GetDbSchemas / GetTables / GetTableTypes /
                         GetPrimaryKeys / GetSqlInfo through GetFlightInfo + DoGet
                         (server/flight_sql_metadata.py)
Results carry Doris's types as Arrow types (INT int32, BIGINT int64, DECIMAL(p,s)
decimal128(p,s), DATE date32, DATETIME timestamp[us], strings utf8; LARGEINT as utf8, as Doris
sends it; JSON as utf8, its text). Errors reach the client as Flight errors with Doris's text.
"""

from __future__ import annotations

import base64
import hmac
import logging
import secrets
import threading
import uuid

import pyarrow as pa
import pyarrow.flight as flight

from catalog.access import Access
from catalog.auth import scramble_password
from catalog.errors import DorisError
from server import flight_sql_messages as msgs
from server import flight_sql_metadata as metadata
from server.auth import denied_message
from server.results import OkResult, RowsResult

log = logging.getLogger("minidoris.flight_sql")
_METADATA = {"CommandGetCatalogs", "CommandGetDbSchemas", "CommandGetTables",
             "CommandGetTableTypes", "CommandGetPrimaryKeys", "CommandGetSqlInfo"}


class _Sessions:
    """Bearer tokens -> sessions (one per authenticated client)."""

    def __init__(self, services):
        self.services = services
        self._by_token: dict[str, object] = {}
        self._lock = threading.Lock()

    def login(self, user: str, password: str) -> str:
        """A session for `user` if some account of that name has this password (the
        middleware sees no client address); `bind` picks the account by address later."""
        from server.session import DorisSession
        name = user.split("@")[0]
        auth = self.services.catalog.auth
        with auth.lock:
            known = [u for (n, _), u in auth.users.items() if n == name]
        if not any(hmac.compare_digest(u.password, scramble_password(password)) for u in known):
            raise flight.FlightUnauthenticatedError(  # no address known here
                f"Access denied for user '{name}' (using password: {'YES' if password else 'NO'})")
        session = DorisSession(self.services)
        session.username = name
        session.flight_password = password
        token = secrets.token_hex(16)
        with self._lock:
            self._by_token[token] = session
        return token

    def get(self, token: str):
        with self._lock:
            return self._by_token.get(token)


def _peer_ip(peer: str) -> str:
    """The client's address from gRPC's peer string (`ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000`)."""
    kind, _, rest = (peer or "").partition(":")
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    return rest.rpartition(":")[0] if kind == "ipv4" else "127.0.0.1"


class _AuthMiddleware(flight.ServerMiddleware):
    def __init__(self, token: str, issued: bool):
        self.token, self.issued = token, issued

    def sending_headers(self):
        return {"authorization": f"Bearer {self.token}"} if self.issued else {}


class _AuthFactory(flight.ServerMiddlewareFactory):
    def __init__(self, sessions: _Sessions):
        self.sessions = sessions

    def start_call(self, info, headers):
        values = headers.get("authorization") or headers.get("Authorization") or []
        auth = values[0] if values else ""
        if auth.lower().startswith("basic "):
            try:
                raw = auth[6:].strip()  # Go's client sends it unpadded
                user, _, password = base64.b64decode(raw + "=" * (-len(raw) % 4),
                                                     altchars=b"-_" if "-" in raw or "_" in raw
                                                     else None).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                raise flight.FlightUnauthenticatedError("malformed Basic credentials") from None
            return _AuthMiddleware(self.sessions.login(user, password), True)
        if auth.lower().startswith("bearer "):
            token = auth[7:].strip()
            if self.sessions.get(token) is None:
                raise flight.FlightUnauthenticatedError("invalid bearer token")
            return _AuthMiddleware(token, False)
        raise flight.FlightUnauthenticatedError("no credentials: use Basic or Bearer authorization")


class _NoPayloadAuth(flight.ServerAuthHandler):
    """Handshake succeeds (credentials travel in headers, checked by the middleware)."""

    def authenticate(self, outgoing, incoming):
        pass

    def is_valid(self, token):
        return b""


def _arrow_schema(result: RowsResult, first: pa.Table | None) -> pa.Schema:
    fields = []
    for i, col in enumerate(result.columns):
        if col.type is not None and col.type.kind in ("LARGEINT", "JSON", "VARIANT"):
            t = pa.string()  # JSON: its text, a plain string column for any client
        elif first is not None:
            t = first.schema.field(i).type
        else:
            t = col.type.arrow()
        fields.append(pa.field(col.name, t))
    return pa.schema(fields)


class FlightSqlServer(flight.FlightServerBase):
    def __init__(self, services, host: str, port: int):
        self.sessions = _Sessions(services)
        super().__init__(f"grpc://{host}:{port}", auth_handler=_NoPayloadAuth(),
                         middleware={"auth": _AuthFactory(self.sessions)})
        self._results: dict[bytes, tuple[pa.Schema, object]] = {}
        self._prepared: dict[bytes, str] = {}
        self._lock = threading.Lock()

    # -- helpers -------------------------------------------------------------------------------
    def _session(self, context):
        middleware = context.get_middleware("auth")
        session = self.sessions.get(middleware.token) if middleware is not None else None
        if session is None:
            raise flight.FlightUnauthenticatedError("not authenticated")
        if session.access is None:
            self._bind(session, _peer_ip(context.peer()))
        return session

    def _bind(self, session, ip: str) -> None:
        """The account the client logs in as from its address (as the MySQL port picks it,
        server/auth.py), its privileges the session's from now on."""
        auth = self.sessions.services.catalog.auth
        password = getattr(session, "flight_password", "")
        account = auth.find_login(session.username, ip)
        if account is None or not hmac.compare_digest(account.password,
                                                      scramble_password(password)):
            raise flight.FlightUnauthenticatedError(
                denied_message(session.username, ip, bool(password)))
        session.access = Access(auth, account, ip)

    def _run(self, context, sql: str):
        results = self._session(context).execute(sql)
        last = results[-1] if results else OkResult()
        if isinstance(last, Exception):
            text = last.client_message() if isinstance(last, DorisError) else str(last)
            raise flight.FlightServerError(text)
        return last

    def _query(self, context, sql: str) -> tuple[pa.Schema, object]:
        result = self._run(context, sql)
        if not isinstance(result, RowsResult):
            return pa.schema([]), iter(())
        batches = iter(result.batches)
        first = next(batches, None)
        schema = _arrow_schema(result, first)

        def tables():
            for t in ([first] if first is not None else []):
                yield _conform(t, schema)
            for t in batches:
                yield _conform(t, schema)
        return schema, tables()

    def _metadata(self, context, kind: str, cmd) -> tuple[pa.Schema, list[pa.Table]]:
        def query(sql: str) -> list[tuple]:
            result = self._run(context, sql)
            return [tuple(r) for b in result.batches for r in zip(*(c.to_pylist()
                                                                     for c in b.columns))]

        def schema_of(db: str, table: str) -> pa.Schema:
            name = f"`{db.replace('`', '``')}`.`{table.replace('`', '``')}`"
            return self._query(context, f"SELECT * FROM {name} LIMIT 0")[0]

        if kind == "CommandGetCatalogs":
            return metadata.catalogs()
        if kind == "CommandGetDbSchemas":
            return metadata.db_schemas(query, cmd.catalog, cmd.db_schema_filter_pattern)
        if kind == "CommandGetTables":
            return metadata.tables(query, schema_of, cmd.catalog, cmd.db_schema_filter_pattern,
                                   cmd.table_name_filter_pattern, list(cmd.table_types),
                                   cmd.include_schema)
        if kind == "CommandGetTableTypes":
            return metadata.table_types()
        if kind == "CommandGetPrimaryKeys":
            return metadata.primary_keys(query, cmd.catalog, cmd.db_schema, cmd.table)
        version = str(self.sessions.services.global_variables.get("version_comment"))
        return metadata.sql_info(list(cmd.info), version)

    # -- Flight RPCs ---------------------------------------------------------------------------
    def get_flight_info(self, context, descriptor):
        kind, cmd = msgs.unpack(descriptor.command)
        if kind == "CommandStatementQuery":
            sql = cmd.query
        elif kind == "CommandPreparedStatementQuery":
            with self._lock:
                sql = self._prepared.get(cmd.prepared_statement_handle)
            if sql is None:
                raise flight.FlightServerError("unknown prepared statement")
        elif kind in _METADATA:
            schema, result = self._metadata(context, kind, cmd)
            tables = iter(result)
        else:
            raise flight.FlightServerError(f"Flight SQL command {kind} is not supported")
        if kind not in _METADATA:
            schema, tables = self._query(context, sql)
        handle = uuid.uuid4().bytes
        with self._lock:
            self._results[handle] = (schema, tables)
        ticket = flight.Ticket(msgs.pack(msgs.new("TicketStatementQuery", statement_handle=handle)))
        return flight.FlightInfo(schema, descriptor, [flight.FlightEndpoint(ticket, [])], -1, -1)

    def do_get(self, context, ticket):
        self._session(context)
        kind, cmd = msgs.unpack(ticket.ticket)
        if kind != "TicketStatementQuery":
            raise flight.FlightServerError(f"unknown ticket {kind}")
        with self._lock:
            entry = self._results.pop(cmd.statement_handle, None)
        if entry is None:
            raise flight.FlightServerError("the result was already read or never existed")
        schema, tables = entry
        return flight.GeneratorStream(schema, tables)

    def do_put(self, context, descriptor, reader, writer):
        kind, cmd = msgs.unpack(descriptor.command)
        if kind == "CommandStatementUpdate":
            sql = cmd.query
        elif kind == "CommandPreparedStatementUpdate":
            with self._lock:
                sql = self._prepared.get(cmd.prepared_statement_handle)
        else:
            raise flight.FlightServerError(f"Flight SQL command {kind} is not supported")
        result = self._run(context, sql)
        count = result.affected_rows if isinstance(result, OkResult) else 0
        writer.write(pa.py_buffer(msgs.new("DoPutUpdateResult", record_count=count).SerializeToString()))

    def do_action(self, context, action):
        kind = action.type
        if kind == "CreatePreparedStatement":
            _, req = msgs.unpack(action.body.to_pybytes())
            handle = uuid.uuid4().bytes
            with self._lock:
                self._prepared[handle] = req.query
            result = msgs.new("ActionCreatePreparedStatementResult",
                              prepared_statement_handle=handle)
            return [flight.Result(pa.py_buffer(msgs.pack(result)))]
        if kind == "ClosePreparedStatement":
            _, req = msgs.unpack(action.body.to_pybytes())
            with self._lock:
                self._prepared.pop(req.prepared_statement_handle, None)
            return []
        if kind in ("CloseSession", "CancelFlightInfo", "EndTransaction"):
            return []
        raise flight.FlightServerError(f"action {kind} is not supported")

    def list_actions(self, context):
        return [("CreatePreparedStatement", ""), ("ClosePreparedStatement", "")]


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    arrays = [c if c.type == f.type else c.cast(f.type) for c, f in zip(table.columns, schema)]
    return pa.Table.from_arrays(arrays, schema=schema)


def start(services, host: str, port: int) -> FlightSqlServer | None:
    """The Flight SQL server on `port` (serving in its own threads), or None when -1."""
    if port is None or port < 0:
        return None
    server = FlightSqlServer(services, host, port)
    threading.Thread(target=server.serve, name="flight-sql", daemon=True).start()
    log.info("arrow flight sql on port %d", server.port)
    return server
