"""Stream Load's two-phase commit: pre-committed transactions and `_stream_load_2pc`.

A stream load with the header `two_phase_commit: true` writes its rowsets (fsynced, invisible)
and stops there: `catalog.load.prepare_load`. Its label is taken while it waits. Then

    PUT /api/{db}/_stream_load_2pc   headers txn_id: N (or label: L), txn_operation: commit|abort

commits it (`catalog.load.commit_load`: one journaled publish that takes the label) or aborts
it (the label is free again; its rowsets are removed). Doris's replies:
`transaction [N] commit successfully.`, `... abort successfully.`, and its refusals for a
transaction already visible or aborted. Pre-committed transactions are journaled
(catalog/precommit.py), as Doris keeps them: after a restart they can still be committed or
aborted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from catalog.errors import DorisError
from catalog import precommit
from catalog.load import PreparedLoad, abort_load, commit_load

_KEEP_FINISHED = 10000


class TwoPhaseError(DorisError):
    pass


class PreparedTxns:
    def __init__(self, catalog):
        self.catalog = catalog
        self._lock = threading.Lock()
        self._prepared: dict[int, PreparedLoad] = {}
        self._finished: OrderedDict[int, tuple[str, str, str]] = OrderedDict()  # id -> (db, label, state)
        for prepared in getattr(catalog, "restored_precommits", []):  # journaled (a restart)
            self._prepared[prepared.txn_id] = prepared

    def prepared(self) -> list[PreparedLoad]:
        """The pre-committed loads now (SHOW PROC '/transactions/<db>/running')."""
        with self._lock:
            return list(self._prepared.values())

    def label_txn(self, db: str, label: str) -> int | None:
        """The pre-committed transaction holding `label` in `db`, if any."""
        with self._lock:
            return next((t for t, p in self._prepared.items() if p.db == db and p.label == label), None)

    def add(self, prepared: PreparedLoad) -> None:
        with self._lock:
            if any(p.db == prepared.db and p.label == prepared.label for p in self._prepared.values()):
                abort_load(self.catalog, prepared)
                raise TwoPhaseError(f"Label [{prepared.label}] has already been used")
            precommit.precommit(self.catalog, prepared)  # journaled: survives a restart
            self._prepared[prepared.txn_id] = prepared

    def operate(self, db: str, operation: str, txn_id: int | None, label: str | None) -> str:
        with self.catalog.lock:
            db = self.catalog.get_db(db).name
        if operation not in ("commit", "abort"):
            raise TwoPhaseError(f"unsupported txn_operation: {operation}")
        with self._lock:
            if txn_id is None:
                if not label:
                    raise TwoPhaseError("txn_id or label is required")
                txn_id = next((t for t, p in self._prepared.items()
                               if p.db == db and p.label == label), None)
                if txn_id is None:
                    txn_id = next((t for t, (d, lab, _) in self._finished.items()
                                   if d == db and lab == label), None)
                if txn_id is None:
                    raise TwoPhaseError(f"transaction with label [{label}] not found")
            prepared = self._prepared.get(txn_id)
            if prepared is None:
                done = self._finished.get(txn_id)
                if done is None:
                    raise TwoPhaseError(f"transaction [{txn_id}] not found")
                state = done[2]
                if operation == "commit":
                    raise TwoPhaseError(f"transaction [{txn_id}] is already {state.lower() if state == 'VISIBLE' else state}, not pre-committed.")
                raise TwoPhaseError(f"transaction [{txn_id}] is already {state}, could not abort.")
            if prepared.db != db:
                raise TwoPhaseError(f"transaction [{txn_id}] not found")
            del self._prepared[txn_id]
        if operation == "abort":
            precommit.end(self.catalog, txn_id)
            abort_load(self.catalog, prepared)  # its rowsets go now; DDL need not wait for it
            self._remember(txn_id, prepared, "ABORTED")
            return f"transaction [{txn_id}] abort successfully."
        try:
            commit_load(self.catalog, prepared)
        except DorisError:
            precommit.end(self.catalog, txn_id)
            self._remember(txn_id, prepared, "ABORTED")
            raise
        precommit.end(self.catalog, txn_id)
        self._remember(txn_id, prepared, "VISIBLE")
        return f"transaction [{txn_id}] commit successfully."

    def _remember(self, txn_id: int, prepared: PreparedLoad, state: str) -> None:
        with self._lock:
            self._finished[txn_id] = (prepared.db, prepared.label or "", state)
            while len(self._finished) > _KEEP_FINISHED:
                self._finished.popitem(last=False)
