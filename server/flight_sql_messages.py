"""The Flight SQL protocol messages the server speaks (Arrow's FlightSql.proto, package
`arrow.flight.protocol.sql`), declared at import time with protobuf's descriptor API: pyarrow
ships Flight but not these messages, and the field numbers below are the wire format.

`pack(msg)` wraps a message in `google.protobuf.Any` as Flight SQL clients expect it;
`unpack(data)` returns (message name, message) of a command or ticket.
"""

from __future__ import annotations

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "arrow.flight.protocol.sql"
_S, _B, _U32, _I64 = (descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                      descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                      descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
                      descriptor_pb2.FieldDescriptorProto.TYPE_INT64)
_BOOL = descriptor_pb2.FieldDescriptorProto.TYPE_BOOL
_REPEATED = descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
_OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL

_MESSAGES = {
    "CommandStatementQuery": [("query", 1, _S), ("transaction_id", 2, _B)],
    "CommandStatementUpdate": [("query", 1, _S), ("transaction_id", 2, _B)],
    "TicketStatementQuery": [("statement_handle", 1, _B)],
    "CommandPreparedStatementQuery": [("prepared_statement_handle", 1, _B)],
    "CommandPreparedStatementUpdate": [("prepared_statement_handle", 1, _B)],
    "ActionCreatePreparedStatementRequest": [("query", 1, _S), ("transaction_id", 2, _B)],
    "ActionCreatePreparedStatementResult": [("prepared_statement_handle", 1, _B),
                                            ("dataset_schema", 2, _B),
                                            ("parameter_schema", 3, _B)],
    "ActionClosePreparedStatementRequest": [("prepared_statement_handle", 1, _B)],
    "DoPutUpdateResult": [("record_count", 1, _I64)],
    "CommandGetSqlInfo": [("info", 1, _U32, _REPEATED)],
    "CommandGetCatalogs": [],
    "CommandGetDbSchemas": [("catalog", 1, _S), ("db_schema_filter_pattern", 2, _S)],
    "CommandGetTables": [("catalog", 1, _S), ("db_schema_filter_pattern", 2, _S),
                         ("table_name_filter_pattern", 3, _S), ("table_types", 4, _S, _REPEATED),
                         ("include_schema", 5, _BOOL)],
    "CommandGetTableTypes": [],
    "CommandGetPrimaryKeys": [("catalog", 1, _S), ("db_schema", 2, _S), ("table", 3, _S)],
}


def _build() -> dict:
    fdp = descriptor_pb2.FileDescriptorProto(name="minidoris/flight_sql.proto", package=PACKAGE,
                                             syntax="proto3")
    for name, fields in _MESSAGES.items():
        m = fdp.message_type.add(name=name)
        for spec in fields:
            fname, number, ftype = spec[:3]
            label = spec[3] if len(spec) > 3 else _OPTIONAL
            m.field.add(name=fname, number=number, type=ftype, label=label)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
            for name in _MESSAGES}


MESSAGES = _build()


def new(name: str, **fields):
    return MESSAGES[name](**fields)


def pack(msg) -> bytes:
    a = any_pb2.Any()
    a.type_url = f"type.googleapis.com/{msg.DESCRIPTOR.full_name}"
    a.value = msg.SerializeToString()
    return a.SerializeToString()


def unpack(data: bytes) -> tuple[str, object]:
    a = any_pb2.Any.FromString(data)
    name = a.type_url.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    cls = MESSAGES.get(name)
    if cls is None:
        return name, None
    return name, cls.FromString(a.value)
