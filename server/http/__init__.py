"""The HTTP port (`http_port`, 8030): Doris's Stream Load and a few REST endpoints.

    service.py       the threaded HTTP server: routing, Basic auth, request bodies
    stream_load.py   PUT /api/{db}/{table}/_stream_load: one load transaction, Doris's JSON reply
    load_options.py  the Stream Load headers (label, column_separator, columns, where, ...)
    load_source.py   the request body (CSV or JSON) as Arrow string columns, bad lines counted
    error_log.py     the rejected rows of recent loads, served at ErrorURL
"""
