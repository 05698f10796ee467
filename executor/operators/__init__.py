"""Physical operators: one small module each, over Arrow tables."""
