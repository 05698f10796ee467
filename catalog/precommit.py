"""Pre-committed transactions (Stream Load's two-phase commit), journaled as Doris keeps them:
a load whose rowsets are written and fsynced but not published survives a restart and can
still be committed or aborted by `_stream_load_2pc`.

    op               data
    txn_precommit    {txn_id, db, table, label, num_rows, rowsets: [[partition, tablet, meta]]}
    txn_precommit_end {txn_id}    committed (after its publish entry) or aborted

At start-up (`restore`) each pre-committed rowset is held again by its tablet (pending: the
orphan sweep keeps its files, a load-file slice keeps its file referenced) and the loads are
handed back to the HTTP service's PreparedTxns, each holding its table's load gate again and
checked at its commit against the table's storage shape journaled with it. A transaction whose label is already taken by
its own publish (a crash between the publish and the end entry) is finished, not restored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storage.rowset import RowsetMeta

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.load import PreparedLoad


def precommit(cat: Catalog, prepared: PreparedLoad) -> None:
    cat._log("txn_precommit", {
        "txn_id": prepared.txn_id, "db": prepared.db, "table": prepared.table,
        "label": prepared.label, "num_rows": prepared.num_rows,
        "rowsets": [[pid, tid, meta.to_dict()] for pid, tid, meta in prepared.rowsets],
        "shape": None if prepared.shape is None else [list(prepared.shape[0]),
                                                       list(prepared.shape[1]),
                                                       prepared.shape[2]]})


def end(cat: Catalog, txn_id: int) -> None:
    with cat.lock:
        known = txn_id in cat.precommitted
    if known:
        cat._log("txn_precommit_end", {"txn_id": txn_id})


def restore(cat: Catalog) -> list[PreparedLoad]:
    """After the tablets are restored, before the orphan sweep: the loads still pre-committed."""
    from catalog.load import PreparedLoad
    out = []
    for txn_id, data in sorted(cat.precommitted.items()):
        label = data.get("label")
        if label is not None and cat.labels.get(data["db"], {}).get(label) == txn_id:
            end(cat, txn_id)  # published before the crash: only its end entry was missing
            continue
        rowsets = []
        for pid, tid, meta in data["rowsets"]:
            rowset = RowsetMeta.from_dict(meta)
            if cat.engine.has_tablet(tid):
                cat.engine.get_tablet(tid).hold_pending(rowset)
                rowsets.append((pid, tid, rowset))
        shape = data.get("shape")
        load = PreparedLoad(data["db"], data["table"], txn_id, rowsets, data["num_rows"], label,
                            source_type="BACKEND_STREAMING",  # only Stream Loads pre-commit
                            shape=None if shape is None else (tuple(shape[0]), tuple(shape[1]),
                                                              shape[2]))
        _enter_gate(cat, load)
        out.append(load)
    return out


def _enter_gate(cat: Catalog, load: PreparedLoad) -> None:
    """A restored load is in flight again: shape-changing DDL of its table (ADD ROLLUP, ...)
    waits for its commit or abort, as before the restart."""
    from catalog.errors import DorisError
    from catalog.load_gate import load_gate

    try:
        with cat.lock:
            table_id = cat.get_table(load.db, load.table).table_id
    except DorisError:
        return  # the table is gone: its commit fails anyway
    load.gate = load_gate(table_id).enter()


def _apply_precommit(cat: Catalog, data: dict) -> None:
    cat.precommitted[int(data["txn_id"])] = data
    cat.last_txn_id = max(cat.last_txn_id, int(data["txn_id"]))


def _apply_end(cat: Catalog, data: dict) -> None:
    cat.precommitted.pop(int(data["txn_id"]), None)


APPLY = {"txn_precommit": _apply_precommit, "txn_precommit_end": _apply_end}
