"""Helpers of the web UI tests: the HTTP port's URL, a login through the form, and a small HTTP
client for the JSON endpoints (no redirects followed)."""

from __future__ import annotations

import base64
import http.client
import json


def base_url(server) -> str:
    return f"http://{server.host}:{server.http_port}"


def login(page, user: str = "root", password: str = "") -> None:
    page.goto("/login")
    page.fill("#username", user)
    page.fill("#password", password)
    page.click("#login-button")
    page.wait_for_url("**/Playground")


def call(server, path: str, body=None, auth: str | None = "root:", headers: dict | None = None,
         method: str | None = None):
    """(status, parsed JSON or text, response headers) of one request to the HTTP port;
    redirects are not followed."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    sent = dict(headers or {})
    if auth is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    if data is not None and "Content-Type" not in sent:
        sent["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(server.host, server.http_port, timeout=30)
    try:
        conn.request(method or ("POST" if data is not None else "GET"), path, body=data,
                     headers=sent)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(raw), resp.headers
    except ValueError:
        return resp.status, raw.decode("utf-8", "replace"), resp.headers
