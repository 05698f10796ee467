"""The dispatch entries of the storage statements: indexes, DELETE, SHOW QUERY PROFILE."""

from __future__ import annotations

from catalog.storage_statements import (BuildIndexStmt, CreateIndexStmt, DeleteStmt, DropIndexStmt,
                                        ShowIndexStmt, ShowQueryProfileStmt)
from server.handlers import delete, index, profile

STORAGE_HANDLERS = {
    CreateIndexStmt: index.create_index,
    DropIndexStmt: index.drop_index,
    BuildIndexStmt: index.build_index,
    ShowIndexStmt: index.show_index,
    DeleteStmt: delete.delete,
    ShowQueryProfileStmt: profile.show_query_profile,
}
