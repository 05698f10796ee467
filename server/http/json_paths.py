"""Stream Load's `json_root` and `jsonpaths` headers (Doris's JSON load): which node of each
JSON document holds the rows, and which field of a row feeds each source column.

    json_root: $.events            the rows are under `events` of every document (with
                                   strip_outer_array, the array there)
    jsonpaths: ["$.k2", "$.k3.k1"] the source columns, in order, are these fields of each row:
                                   the `columns` header's source names, or without it the
                                   table's columns in order (Doris: "如果不指定 Columns，抽取的
                                   字段将按照表的列顺序直接映射"); a missing field is NULL, an
                                   object or array its JSON text

Paths are Doris's simple JSONPath: `$`, `.key`, `["key"]` and `[index]` steps.
"""

from __future__ import annotations

import json
import re

from catalog.errors import AnalysisError

_STEP = re.compile(r"""\.([^.\[\]]+)|\[\s*(\d+)\s*\]|\[\s*["']([^"']*)["']\s*\]""")


def _steps(path: str, header: str) -> list:
    text = path.strip()
    if not text.startswith("$"):
        raise AnalysisError(f"Invalid {header}: {path}")
    steps, pos = [], 1
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise AnalysisError(f"Invalid {header}: {path}")
        key, index, quoted = m.groups()
        steps.append(int(index) if index is not None else (key if key is not None else quoted))
        pos = m.end()
    return steps


def parse_root(text: str) -> str:
    _steps(text, "json_root")
    return text.strip()


def parse_paths(text: str) -> list[str]:
    try:
        paths = json.loads(text)
    except json.JSONDecodeError:
        raise AnalysisError(f"Invalid jsonpaths: {text}") from None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise AnalysisError(f"Invalid jsonpaths: {text}")
    for p in paths:
        _steps(p, "jsonpaths")
    return paths


def extract(node, path: str):
    """The value at `path` in `node`, or None."""
    for step in _steps(path, "jsonpaths"):
        if isinstance(step, int):
            node = node[step] if isinstance(node, list) and step < len(node) else None
        else:
            node = node.get(step) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


def apply_root(documents: list, root: str | None, strip_outer_array: bool) -> list:
    """The rows of the parsed documents: each one's `root` node (an array's elements with
    strip_outer_array)."""
    if root is None:
        return documents
    rows = []
    for doc in documents:
        node = extract(doc, root)
        if isinstance(node, list) and strip_outer_array:
            rows.extend(node)
        elif node is not None:
            rows.append(node)
    return rows


def apply_paths(rows: list, paths: list[str], names: list[str]) -> list[dict]:
    """Each row as {source name: its path's value}; objects and arrays as JSON text."""
    out = []
    for row in rows:
        values = {}
        for name, path in zip(names, paths):
            v = extract(row, path)
            values[name] = json.dumps(v, separators=(",", ":"), ensure_ascii=False) \
                if isinstance(v, (dict, list)) else v
        out.append(values)
    return out
