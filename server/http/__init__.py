"""The HTTP port (`http_port`, 8030): Stream Load, Doris's REST endpoints, /metrics, the web UI.

    service.py       the service: a Starlette app served by uvicorn on the server's loop
    routes.py        the routes and the small endpoints (health, metrics, compaction, REST)
    asgi.py          shared: JSON replies, Basic auth, bodies, threads, Expect handling
    request_body.py  a request body as a blocking stream read from the load's thread
    load_endpoints.py  Stream Load, its two-phase commit, the error log
    stream_load.py   PUT /api/{db}/{table}/_stream_load: one load transaction, Doris's JSON reply
    stream_load_records.py  the loads that ran (SHOW STREAM LOAD)
    load_options.py  the Stream Load headers (label, column_separator, columns, where, ...)
    load_source.py   the request body (CSV or JSON) as Arrow string columns, bad lines counted
    body_codec.py    compress_type: the body read through gz / bz2 / lz4 / deflate
    columnar_body.py format parquet / orc / arrow: the body spooled and read in typed batches
    error_log.py     the rejected rows of recent loads, served at ErrorURL
    read_api.py, query_plan.py  the Spark connector's read path
"""
