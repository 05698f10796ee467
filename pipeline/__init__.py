"""pipeline: the data pipeline on Apache Spark (PySpark), built on the server's own code.

    spark_types.py   Doris column types <-> Spark SQL types (the DDL a DataFrame declares)
    job_spec.py      what the server hands a Spark Load driver: the table (as the journal
                     stores it), the source files, the load's clauses, where to write
    splits.py        the input cut into splits that executor tasks read themselves (CSV byte
                     ranges at line boundaries, Parquet row groups)
    etl.py           executor-side work of Spark Load: source rows converted as Stream Load
                     converts them (server/http/load_rows.py), routed and bucketed by
                     catalog/load.py:place_rows, and each tablet's rows written as complete
                     segment files by storage's own memtable + rowset writer
    spark_load.py    the Spark Load driver: `python -m pipeline.spark_load --job job.json`
                     (the server starts it in a subprocess; spark-submit runs it as well)
    load_manager.py  the server side of Spark Load: jobs, states, the driver process, the
                     LOADING phase that adopts the files and publishes one version
    source.py        the PySpark data source `doris` (reads tablets over HTTP as Arrow; writes
                     through Stream Load with two-phase commit)

Nothing here copies storage or catalog logic: bucket hash, partition routing, value
conversion and the segment writer are imported.
"""
