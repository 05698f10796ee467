"""The web UI's pages, one module each; each lists its routes in `ROUTES` (server/webui/app.py)."""
