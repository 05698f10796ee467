"""Parser for ALTER TABLE ... ENABLE FEATURE (an entry of statement.py:_OWN_PARSERS):

    ALTER TABLE [db.]t ENABLE FEATURE "name" [WITH PROPERTIES (...)]

The rules live in catalog/enable_feature.py. Any other ALTER TABLE returns None.
"""

from __future__ import annotations

from catalog.enable_feature import EnableFeatureStmt
from server.parser.tokens import TokenCursor


def parse_enable_feature(cur: TokenCursor) -> EnableFeatureStmt | None:
    cur.expect("ALTER", "TABLE")
    db, table = cur.qualified_name()
    if not cur.accept("ENABLE", "FEATURE"):
        return None
    feature = cur.string("feature name")
    properties = cur.properties() if cur.accept("WITH", "PROPERTIES") else {}
    cur.expect_end()
    return EnableFeatureStmt(db, table, feature, properties)
