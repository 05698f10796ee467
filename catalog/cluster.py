"""The cluster side of the Catalog: backends, replica placement and colocation groups.

`ClusterMixin` is mixed into `catalog.catalog.Catalog`; its state (`backends`, `colocation`)
changes only through journaled operations applied by `catalog/backend.py:APPLY` and
`catalog/colocation.py:APPLY`.

API for the planner and executor (all take the catalog lock themselves where they read state):

    catalog.colocate_group_of(table) -> ColocateGroup | None   table: OlapTable or table id
    catalog.is_group_stable(group) -> bool                     group: ColocateGroup or "db.grp"
    catalog.colocation_of(table) -> (ColocateGroup, stable) | None
    catalog.fe_config_values() -> dict                         disable_colocate_* FE configs
    catalog.available_backends() -> list[int]                  ids that may hold new replicas
    catalog.backends: dict[int, Backend]                       every backend, by id

Placement is in the tablets: `TabletMeta.replicas` lists backend ids (the first is the replica
a scan reads). For a colocated table, the tablet of bucket i in every partition and index has
exactly the backends `group.seq[i]` while the group is stable; two tables of one stable group
therefore have bucket i on the same backends. `ColocateGroup` gives `group_id` ("db.grp"),
`full_name`, `buckets`, `replication_num`, `dist_types` (distribution column types by position),
`seq` and `table_ids`; the same object is returned for every table of a group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalog import backend as be
from catalog import colocation as co
from catalog.backend import Backend
from catalog.errors import DdlError

if TYPE_CHECKING:
    from catalog.model import Database, OlapTable

FIRST_BACKEND_ID = 10001
_COLOCATE_CONFIGS = ("disable_colocate_join", "disable_colocate_relocate",
                     "disable_colocate_balance")
_DROP_WARNING = ("It is highly NOT RECOMMENDED to use DROP BACKEND stmt.It is not safe to "
                 "directly drop a backend. All data on this backend will be discarded "
                 "permanently. If you insist, use DROPP instead of DROP")


class ClusterMixin:
    def _init_cluster(self, backend_num: int) -> None:
        self.backends: dict[int, Backend] = {}
        self.colocation = co.ColocateIndex()
        self.fe_config: Any = None
        self._initial_backend_num = backend_num
        self._placement_cursor = 0
        self._pending_seqs: dict[int, list[list[int]]] = {}

    def _bootstrap_backends(self) -> None:
        """After replay: a cluster that never had backends gets `backend_num` of them (ids from
        the id sequence, so a fresh cluster's are 10001...). Every backend 'starts' now."""
        with self.lock:
            if not self.backends:
                legacy = self.next_id > 10000  # placements written before backends were objects
                for i in range(self._initial_backend_num):
                    bid = FIRST_BACKEND_ID + i if legacy else self._alloc_id()
                    backend = Backend(bid, f"127.0.0.{i + 1}")
                    self._log("add_backend", {"backend": backend.to_dict(),
                                              "next_id": self.next_id})
            now = self.clock()
            for backend in self.backends.values():
                backend.last_start_time = now

    def attach_fe_config(self, fe_config: Any) -> None:
        """The runtime FE config store (`catalog/fe_config.py:FeConfig`)."""
        self.fe_config = fe_config

    def fe_config_get(self, name: str) -> Any:
        return self.fe_config.get(name) if self.fe_config is not None else False

    # -- planner API -----------------------------------------------------------------------------
    def fe_config_values(self) -> dict[str, Any]:
        return {name: self.fe_config_get(name) for name in _COLOCATE_CONFIGS}

    def colocate_group_of(self, table: OlapTable | int) -> co.ColocateGroup | None:
        table_id = table if isinstance(table, int) else table.table_id
        with self.lock:
            return self.colocation.of_table(table_id)

    def is_group_stable(self, group: co.ColocateGroup | str) -> bool:
        with self.lock:
            g = self.colocation.groups.get(group) if isinstance(group, str) else group
            return g is not None and co.is_stable(self, g)

    def colocation_of(self, table: OlapTable | int) -> tuple[co.ColocateGroup, bool] | None:
        with self.lock:
            g = self.colocate_group_of(table)
            return None if g is None else (g, co.is_stable(self, g))

    def available_backends(self) -> list[int]:
        with self.lock:
            return be.available_ids(self)

    # -- placement -------------------------------------------------------------------------------
    def _place(self, replicas: int) -> list[int]:
        """Round-robin over the available backends (distinct backends per tablet)."""
        ids = be.available_ids(self) or sorted(self.backends)
        start = self._placement_cursor % len(ids)
        self._placement_cursor = (start + 1) % len(ids)
        return [ids[(start + i) % len(ids)] for i in range(min(replicas, len(ids)))]

    def _place_bucket(self, table: OlapTable, bucket: int, replicas: int) -> list[int]:
        """Replicas of a new tablet: its group's bucket sequence for a colocated table."""
        group = self.colocation.of_table(table.table_id)
        seq = group.seq if group is not None else self._pending_seqs.get(table.table_id)
        if seq is not None and bucket < len(seq):
            return list(seq[bucket])
        return self._place(replicas)

    def _check_replication(self, replicas: int) -> None:
        if replicas > len(be.available_ids(self)):
            raise DdlError(
                "Failed to find enough backend, please check the replication num,replication "
                "tag and storage medium and avail capacity of backends.\nCreate failed "
                f"replications:\nreplication tag: {{\"location\" : \"default\"}}, "
                f"replication num: {replicas}, storage medium: HDD")

    def _prepare_colocation(self, db: Database, table: OlapTable, replicas: int) -> dict | None:
        """CREATE TABLE with colocate_with: check the table against its group (or start one) and
        fix the bucket sequence its tablets will use. The result goes into the create_table
        journal entry as "colocate"."""
        name = table.properties.get("colocate_with")
        if not name:
            table.properties.pop("colocate_with", None)
            return None
        if table.distribution.kind != "HASH":
            raise DdlError("Random distribution for colocate table is unsupported")
        group = self.colocation.by_full_name(co.full_group_name(db.db_id, name))
        co.check_dynamic_partition_buckets(table, group)
        if group is not None:
            co.check_table(group, table, replicas)
            spec = group.to_dict()
        else:
            spec = self._new_group_spec(db, table, name, table.distribution.buckets, replicas,
                                        None)
        self._pending_seqs[table.table_id] = spec["seq"]
        return {"table_id": table.table_id, "group": spec}

    def _new_group_spec(self, db: Database, table: OlapTable, name: str, buckets: int,
                        replicas: int, seq: list[list[int]] | None) -> dict:
        if seq is None:
            available = be.available_ids(self)
            seq = co.initial_seq(available, buckets, replicas, self._placement_cursor)
            self._placement_cursor = (self._placement_cursor + 1) % max(len(available), 1)
        types = [table.column(c).type for c in table.distribution.columns]
        group = co.ColocateGroup(co.group_db_id(db.db_id, name), self._alloc_id(), name, buckets,
                                 replicas, types, seq)
        return group.to_dict()

    # -- ALTER TABLE t SET ("colocate_with" = ...) ------------------------------------------------
    def alter_colocation_properties(self, db_name: str | None, table_name: str,
                                    properties: dict[str, str]) -> bool:
        """The colocation side of ALTER TABLE t SET (...): `colocate_with` moves the table (True:
        handled); a replication change of a colocated table is refused."""
        if "colocate_with" in properties and len(properties) == 1:
            self.alter_table_colocate(db_name, table_name, properties["colocate_with"])
            return True
        replication = ("replication_num", "replication_allocation")
        if any(k.split(".")[-1] in replication for k in properties):
            with self.lock:
                co.check_change_replication(self, self.get_table(db_name, table_name))
        return False

    def alter_table_colocate(self, db_name: str | None, table_name: str, name: str) -> None:
        with self.lock:
            db = self.get_db(db_name)
            table = self.get_table(db.name, table_name)
            current = self.colocation.of_table(table.table_id)
            if not name:
                if current is not None:
                    self._log("colocate_leave", {"table_id": table.table_id})
                return
            full = co.full_group_name(db.db_id, name)
            if current is not None and current.full_name == full:
                return
            target = self.colocation.by_full_name(full)
            if target is not None:
                co.check_table(target, table)
                spec = target.to_dict()
            else:
                co.check_new_group(table)
                parts = table.sorted_partitions()
                buckets = parts[0].buckets if parts else table.distribution.buckets
                replicas = parts[0].replication_num if parts else \
                    int(table.properties.get("replication_num", "3"))
                spec = self._new_group_spec(db, table, name, buckets, replicas,
                                            co.table_seq(table) or None)
            self._log("colocate_join", {"table_id": table.table_id, "group": spec,
                                        "next_id": self.next_id})

    # -- ALTER SYSTEM ... BACKEND ----------------------------------------------------------------
    def add_backends(self, host_ports: list[str]) -> None:
        with self.lock:
            parsed = [be.parse_host_port(hp) for hp in host_ports]
            for host, port in parsed:
                if be.find_backend(self, host, port) is not None:
                    raise DdlError(f"Same backend already exists[{host}:{port}]")
            for host, port in parsed:
                backend = Backend(self._alloc_id(), host, port, last_start_time=self.clock())
                self._log("add_backend", {"backend": backend.to_dict(), "next_id": self.next_id})

    def decommission_backends(self, host_ports: list[str]) -> None:
        with self.lock:
            targets = [b for b in be.check_exists(self, host_ports, "Backend does not exist")
                       if not b.decommissioned]
            if not targets:
                return
            leaving = {b.backend_id for b in targets}
            remaining = len([b for b in be.available_ids(self) if b not in leaving])
            for db in self.dbs.values():
                for table in db.tables.values():
                    for p in table.sorted_partitions():
                        if p.replication_num > remaining:
                            raise DdlError(
                                f"After decommission, partition {p.name} of table {db.name}."
                                f"{table.name} 's replication allocation {{ tag.location.default: "
                                f"{p.replication_num} }} > available backend num {remaining} on tag "
                                f"{be.LOCATION_TAG}, otherwise need to decrease the partition's "
                                "replication num.")
            for b in targets:
                self._log("set_backend_state", {"backend_id": b.backend_id, "decommissioned": True})

    def cancel_decommission(self, host_ports: list[str]) -> None:
        with self.lock:
            for b in be.check_exists(self, host_ports, "Backend does not exist"):
                if b.decommissioned:
                    self._log("set_backend_state", {"backend_id": b.backend_id,
                                                    "decommissioned": False})

    def drop_backends(self, host_ports: list[str], force: bool) -> None:
        """DROPP BACKEND: the backend goes at once; the tablet scheduler re-places its replicas.
        A tablet whose only replica was there is re-placed in the same entry (no data loss)."""
        if not force:
            raise DdlError(_DROP_WARNING)
        with self.lock:
            for b in be.check_exists(self, host_ports, "backend does not exists"):
                others = [x for x in be.available_ids(self) if x != b.backend_id] or \
                    [x for x in sorted(self.backends) if x != b.backend_id]
                load = be.replica_counts(self)
                rescue = {}
                for *_, meta in be.all_tablets(self):
                    if meta.replicas == [b.backend_id]:
                        if not others:  # minidoris: a placement is never lost (Doris would)
                            raise DdlError(f"Backend {b.backend_id} holds the last replica of "
                                           f"tablet {meta.tablet_id}: add a backend first")
                        target = be.pick_target(others, [], load)
                        rescue[str(meta.tablet_id)] = target
                        load[target] = load.get(target, 0) + 1
                self._log("drop_backend", {"backend_id": b.backend_id, "rescue": rescue})
