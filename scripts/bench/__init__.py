"""TPC-H and SSB data, loading, queries and the benchmark of minidoris against DuckDB (README.md)."""
