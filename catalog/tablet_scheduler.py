"""The tablet scheduler: relocation, repair and colocate balance, one journaled step at a time.

Doris runs this as the ColocateTableCheckerAndBalancer and TabletScheduler daemons. Here one
`step()` does one round, in this order:

1. drop decommissioned backends that hold no replica any more;
2. colocation groups (none with buckets still pending): when a backend of the bucket sequence
   is unavailable (decommissioned, dropped), replace it in every bucket with the least used
   available backend not already in that bucket (relocate; off with FE config
   `disable_colocate_relocate`); then, when all are available, spread the sequence evenly
   (balance; off with `disable_colocate_balance`). A changed sequence is journaled
   (`colocate_set_seq`) and makes the changed buckets pending: the group is unstable;
3. for every group with pending buckets, move the lowest one: all replicas of the bucket in
   every table and partition of the group move together (`colocate_move_bucket`); when the last
   one has moved the group is stable again;
4. tablets outside groups: replicas on unavailable backends move, and tablets short of their
   replication number (after DROP BACKEND) gain one, up to `batch` tablets a step, each to the
   least loaded available backend without a replica of it (`move_replicas`).

The balance algorithm is Doris's (ColocateTableCheckerAndBalancer.relocateAndBalance): flatten
the sequence, and while the most used backend has more than one replica more than the least
used one, replace the first occurrence of the former by the latter in a bucket that lacks it.

Time: `start(interval_s)` runs `step()` on a daemon thread every interval (conf
`tablet_schedule_interval_ms`); tests call `step()` / `run_until_idle()` instead and so drive
it deterministically. Every change goes through the journal, so a restart resumes where the
scheduler stopped.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from catalog import backend as be
from catalog.colocation import ColocateGroup
from catalog.daemon import Daemon

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

ConfigGetter = Callable[[str], Any]


def relocate_and_balance(seq: list[list[int]], available: list[int], relocate: bool = True,
                         balance: bool = True) -> list[list[int]]:
    """The new bucket sequence (a copy; equal to `seq` when nothing can or need change)."""
    seq = [list(bucket) for bucket in seq]
    avail = set(available)

    def counts() -> dict[int, int]:
        c = {b: 0 for b in available}
        for bucket in seq:
            for b in bucket:
                if b in avail:
                    c[b] += 1
        return c

    if relocate:
        for bucket in seq:
            for j, b in enumerate(bucket):
                if b not in avail:
                    target = be.pick_target(available, bucket, counts())
                    if target is not None:
                        bucket[j] = target
    if not balance or any(b not in avail for bucket in seq for b in bucket):
        return seq
    while _balance_once(seq, available, counts()):
        pass
    return seq


def _balance_once(seq: list[list[int]], available: list[int], c: dict[int, int]) -> bool:
    high = sorted(available, key=lambda b: (-c[b], b))
    low = sorted(available, key=lambda b: (c[b], b))
    for src in high:
        for dst in low:
            if c[src] - c[dst] <= 1:
                break
            for bucket in seq:
                if src in bucket and dst not in bucket:
                    bucket[bucket.index(src)] = dst
                    return True
    return False


class TabletScheduler(Daemon):
    NAME = "tablet-scheduler"

    def __init__(self, catalog: Catalog, config: ConfigGetter | None = None, batch: int = 10):
        super().__init__()
        self.catalog = catalog
        self.config = config or (lambda name: False)
        self.batch = batch

    # -- one round -------------------------------------------------------------------------------
    def step(self) -> bool:
        """One round of the four phases; True if it changed anything."""
        cat = self.catalog
        with cat.lock:
            changed = self._drop_empty_decommissioned()
            for group in sorted(cat.colocation.groups.values(), key=lambda g: g.group_id):
                changed |= self._update_seq(group)
            for group in sorted(cat.colocation.groups.values(), key=lambda g: g.group_id):
                if group.pending:
                    cat._log("colocate_move_bucket",
                             {"group_id": group.group_id, "bucket": min(group.pending)})
                    changed = True
            changed |= self._repair_tablets()
        return changed

    def run_until_idle(self, max_steps: int = 10000) -> int:
        """Steps until one changes nothing; returns how many changed something."""
        for n in range(max_steps):
            if not self.step():
                return n
        return max_steps

    def _drop_empty_decommissioned(self) -> bool:
        cat = self.catalog
        counts = be.replica_counts(cat)
        changed = False
        for bid, backend in sorted(cat.backends.items()):
            if backend.decommissioned and counts.get(bid, 0) == 0:
                cat._log("drop_backend", {"backend_id": bid, "rescue": {}})
                changed = True
        return changed

    def _update_seq(self, group: ColocateGroup) -> bool:
        if group.pending:
            return False
        cat = self.catalog
        available = be.available_ids(cat)
        if len(available) < group.replication_num:
            return False  # not enough backends: the group stays unstable
        new = relocate_and_balance(group.seq, available,
                                   relocate=not self.config("disable_colocate_relocate"),
                                   balance=not self.config("disable_colocate_balance"))
        if new == group.seq:
            return False
        cat._log("colocate_set_seq", {"group_id": group.group_id, "seq": new})
        log.info("colocate group %s: new bucket sequence %s", group.group_id, new)
        return True

    def _repair_tablets(self) -> bool:
        cat = self.catalog
        grouped = {t for g in cat.colocation.groups.values() for t in g.table_ids}
        available = be.available_ids(cat)
        load = be.replica_counts(cat)
        moves: list[list] = []
        for table, p, _, _, meta in be.all_tablets(cat):
            if len(moves) >= self.batch:
                break
            if table.table_id in grouped:
                continue
            bad = [b for b in meta.replicas if b not in available]
            if bad or len(meta.replicas) < p.replication_num:
                target = be.pick_target(available, meta.replicas, load)
                if target is None:
                    continue
                src = bad[0] if bad else None
                if src is None and len(meta.replicas) >= p.replication_num:
                    continue
                moves.append([meta.tablet_id, src, target])
                load[target] = load.get(target, 0) + 1
        if not moves:
            return False
        cat._log("move_replicas", {"moves": moves})
        return True
