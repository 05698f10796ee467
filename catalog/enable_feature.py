"""ALTER TABLE ... ENABLE FEATURE: hidden columns added to an existing Unique table.

    ALTER TABLE [db.]t ENABLE FEATURE "BATCH_DELETE"
    ALTER TABLE [db.]t ENABLE FEATURE "SEQUENCE_LOAD" WITH PROPERTIES (
        "function_column.sequence_type" = "Date")

As Doris's AlterTableStmt.rewriteAlterClause, each is an ADD COLUMN of a hidden column
(catalog/hidden_columns.py): `__DORIS_DELETE_SIGN__` for batch delete (every Unique table made
here already has it, so this only helps tables made before the hidden columns existed), and
`__DORIS_SEQUENCE_COL__` of the given type for sequence loads. Loads then name the sequence
column (Stream Load's `function_column.sequence_col` header, or the hidden column in an
INSERT's column list).

It is a light schema change: one `enable_feature` journal entry gives the table its hidden
columns (with column unique ids, so rowsets written before read the new column as NULL, or 0
for the delete sign, through storage/column_mapping.py) and the tablets their new schema.

    op              data
    enable_feature  {db, table, schema: schema_change's _Plan.schema(), hidden_columns}

Errors are Doris's: the feature must be known ("unknown feature for alter clause"), the
table must be Unique ("Batch delete only supported in unique tables." / "Sequence load only
supported in unique tables."), the column must not exist yet (SchemaChangeHandler's "Can not
enable ... support, already supported ...").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from catalog.errors import AnalysisError, DdlError
from catalog.hidden_columns import SEQUENCE_TYPE_PROPERTY, has_sequence, hidden_column, \
    sequence_type
from catalog.index_journal import update_tablet_schemas
from catalog.model import UNIQUE_KEYS, Column
from storage.schema import DELETE_SIGN, SEQUENCE_COL, VERSION_COL
from storage.types import DataType

if TYPE_CHECKING:
    from catalog.catalog import Catalog

FEATURES = ("BATCH_DELETE", "SEQUENCE_LOAD")


@dataclass
class EnableFeatureStmt:
    db: str | None
    table: str
    feature: str
    properties: dict[str, str] = field(default_factory=dict)


def enable_feature(cat: Catalog, db: str | None, stmt: EnableFeatureStmt) -> None:
    from catalog import rollup_ddl, rollup_job
    from catalog.load import table_lock
    from catalog.load_gate import load_gate
    from catalog.schema_change import plan_for

    feature = stmt.feature.upper()
    if feature not in FEATURES:
        raise AnalysisError("unknown feature for alter clause")
    db_name, table_id = rollup_ddl.resolve(cat, stmt.db or db, stmt.table)
    with cat.lock:  # refused at once while an ALTER job runs or waits, not after the gate
        rollup_job.check_normal(cat, cat.get_table(db_name, stmt.table))
    with load_gate(table_id).exclusive(), table_lock(table_id), cat.lock:
        table = cat.get_table(db_name, stmt.table)
        if table.keys_type != UNIQUE_KEYS:
            raise AnalysisError("Batch delete only supported in unique tables."
                                if feature == "BATCH_DELETE" else
                                "Sequence load only supported in unique tables.")
        rollup_job.check_normal(cat, table)
        plan = plan_for(table)
        hidden = list(table.hidden_columns)
        if feature == "BATCH_DELETE":
            if hidden_column(table, DELETE_SIGN) is not None:
                raise DdlError("Can not enable batch delete support, already supported batch "
                               "delete.")
            new = [Column(DELETE_SIGN, DataType("TINYINT"), False, "REPLACE", False, "0",
                          "doris delete flag hidden column")]
            if hidden_column(table, VERSION_COL) is None:
                new.append(Column(VERSION_COL, DataType("BIGINT"), False, "REPLACE", False, "0",
                                  "doris version hidden column"))
        else:
            if SEQUENCE_TYPE_PROPERTY not in stmt.properties:
                raise AnalysisError("unknown sequence column type")
            seq_type = sequence_type({SEQUENCE_TYPE_PROPERTY:
                                      stmt.properties[SEQUENCE_TYPE_PROPERTY]}, table.columns)
            if has_sequence(table) or hidden_column(table, SEQUENCE_COL) is not None:
                raise DdlError("Can not enable sequence column support, already supported "
                               "sequence column.")
            new = [Column(SEQUENCE_COL, seq_type, False, "REPLACE", True, None,
                          "sequence column hidden column")]
            plan.properties[SEQUENCE_TYPE_PROPERTY] = stmt.properties[SEQUENCE_TYPE_PROPERTY]
        for c in new:
            c.unique_id = plan.next_uid
            plan.next_uid += 1
        # the sign and version columns stay before the sequence column, as Doris orders them
        hidden = sorted(hidden + new, key=lambda c: c.name == SEQUENCE_COL)
        cat._log("enable_feature", {"db": db_name, "table": table.name,
                                    "schema": plan.schema(),
                                    "hidden_columns": [c.to_dict() for c in hidden]})


def apply_enable_feature(cat: Catalog, data: dict) -> None:
    from catalog.schema_change import apply_schema

    table = cat.dbs[data["db"]].tables[data["table"]]
    apply_schema(cat, table, data["schema"])
    table.hidden_columns = [Column.from_dict(c) for c in data["hidden_columns"]]
    update_tablet_schemas(cat, table)


APPLY = {"enable_feature": apply_enable_feature}
