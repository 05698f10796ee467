"""ALTER TABLE ... ENABLE FEATURE: routes to catalog/enable_feature.py."""

from __future__ import annotations

from catalog.enable_feature import EnableFeatureStmt, enable_feature
from server.handlers.context import StatementContext
from server.results import OkResult


def enable(stmt: EnableFeatureStmt, ctx: StatementContext) -> OkResult:
    enable_feature(ctx.catalog, ctx.db, stmt)
    return OkResult()


HANDLERS = {EnableFeatureStmt: enable}
