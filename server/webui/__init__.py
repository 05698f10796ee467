"""The web UI on the HTTP port: Doris FE's pages (Playground, System, QueryProfile, Session,
Configuration, Logs) plus a table browser and a progress page, server-rendered with Jinja2
templates and one small script, shipped in the package (templates/, static/).

app.py routes a request and turns failures into error pages; logins.py says who is asking;
sql.py runs statements as that account; pages/ has one module per page.
"""

from server.webui.app import handle, owns
from server.webui.logins import Logins

__all__ = ["Logins", "handle", "owns"]
