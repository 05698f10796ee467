"""Doris's inverted index: text analysis (analyzer.py), MATCH evaluation over token lists
(match.py) and the per-segment index of terms -> row bitmaps (index.py)."""
