"""The project's own parsers for the Doris statements sqlglot leaves raw."""
