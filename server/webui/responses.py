"""What the web UI's handlers return: an HTML page, a JSON reply in Doris's envelope
(`{"msg", "code", "data", "count"}`), a redirect, or an error page."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from server.webui import render


@dataclass
class Response:
    status: int
    body: bytes
    ctype: str = "text/html; charset=utf-8"
    headers: dict = field(default_factory=dict)


class NotFound(Exception):
    """An unknown page, query id or name the page cannot show."""


def ok(data, count: int = 0) -> Response:
    return Response(200, json.dumps({"msg": "success", "code": 0, "data": data,
                                     "count": count}, default=str).encode(), "application/json")


def failed(message: str, status: int = 200, code: int = 1) -> Response:
    return Response(status, json.dumps({"msg": message, "code": code, "data": None,
                                        "count": 0}).encode(), "application/json")


def error_page(status: int, message: str, caller=None) -> Response:
    return Response(status, render.page("error.html", caller, status=status, message=message))


def redirect(location: str, headers: dict | None = None) -> Response:
    return Response(303, b"", "text/plain", {"Location": location, **(headers or {})})
