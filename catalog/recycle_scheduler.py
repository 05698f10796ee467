"""The recycle bin daemon (Doris's CatalogRecycleBin is a MasterDaemon): a thread that erases
what has been in the bin too long.

Every `interval_s` (Doris's daemon default, 30 s) one pass reads `catalog_trash_expire_second`
and `max_same_name_catalog_trash_num` from the runtime FE config and erases, in one journal
entry, the partitions, tables and databases they expire (catalog/recycle_bin.py:expired,
catalog/recycle_ops.py:erase_expired). `step(now)` is the pass, for tests with their own clock.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable

from catalog.daemon import Daemon
from catalog.recycle_bin import Erasure
from catalog.recycle_ops import erase_expired

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

INTERVAL_S = 30.0


class RecycleBinDaemon(Daemon):
    NAME = "recycle-bin"

    def __init__(self, catalog: Catalog, config: Callable[[str], Any]):
        super().__init__()
        self.catalog = catalog
        self.config = config

    def step(self, now: float | None = None) -> Erasure:
        return erase_expired(self.catalog, self.catalog.clock() if now is None else now,
                             int(self.config("catalog_trash_expire_second")),
                             int(self.config("max_same_name_catalog_trash_num")))

    def start(self, interval_s: float = INTERVAL_S) -> None:
        super().start(interval_s)

    def after_step(self, erased: Erasure) -> None:
        if erased:
            log.info("recycle bin erased %s", erased.to_dict())
