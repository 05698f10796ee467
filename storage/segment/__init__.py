"""Segment files: one immutable, sorted, columnar file per flush (layout in footer.py).

Entry points: `write_segment` (writer.py) and `SegmentReader` (reader.py).
"""

from storage.segment.reader import SegmentReader
from storage.segment.writer import SegmentInfo, SegmentOptions, write_segment

__all__ = ["SegmentReader", "SegmentInfo", "SegmentOptions", "write_segment"]
