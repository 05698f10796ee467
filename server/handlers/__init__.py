"""Statement handlers, one module per family; `server.dispatch` maps statements to them."""
