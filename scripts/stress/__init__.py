"""Stress scripts: long concurrent runs that look for wrong answers (not timed assertions)."""
