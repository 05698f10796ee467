"""Fixtures of the in-process server tests: the server's services over a fresh data directory,
one per test module (no wire, no process: sessions call DorisSession directly)."""

from __future__ import annotations

import pytest

from server.config import load_config
from server.main import open_services


@pytest.fixture(scope="module")
def services(tmp_path_factory, request):
    cfg = load_config(None)
    cfg.data_dir = str(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
                       / "data")
    svc = open_services(cfg)
    yield svc
    svc.dynamic_scheduler.shutdown()
    svc.pool.shutdown(wait=False, cancel_futures=True)
    svc.catalog.close()
    if svc.data_dir_lock is not None:
        svc.data_dir_lock.close()
