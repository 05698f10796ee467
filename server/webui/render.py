"""The web UI's HTML: Jinja2 templates shipped in the package (server/webui/templates), every
value autoescaped (a table named `<script>` or a cell holding HTML renders as text)."""

from __future__ import annotations

import jinja2

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("server.webui", "templates"),
                          autoescape=True, undefined=jinja2.StrictUndefined,
                          trim_blocks=True, lstrip_blocks=True)

# The pages of the navigation bar, Doris FE's names: (path, title)
NAV = [("/Playground", "Playground"), ("/System", "System"), ("/QueryProfile", "QueryProfile"),
       ("/Session", "Session"), ("/Configuration", "Configuration"), ("/Logs", "Logs"),
       ("/Tables", "Tables"), ("/Progress", "Progress")]


def page(template: str, caller=None, active: str = "", **values) -> bytes:
    """A page of the UI: the template with the navigation bar, the user and the CSRF token."""
    return _ENV.get_template(template).render(
        nav=NAV, active=active, user=caller.name if caller is not None else None,
        csrf=caller.login.csrf if caller is not None and caller.login is not None else "",
        **values).encode()
