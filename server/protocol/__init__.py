"""The MySQL wire layer: mysql-mimic's connection with minidoris's fixes and row encoder."""
