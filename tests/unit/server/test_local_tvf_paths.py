"""local()'s file resolution (server/local_tvf.py): paths stay inside user_files_secure_path
whatever `..`, absolute paths or symlinks say; wildcards and comma lists; the size bound."""

from __future__ import annotations

import os

import pytest

from catalog.errors import AnalysisError
from server import local_tvf


def _tvf(root):
    class _Catalog:
        backends = {10001: object()}
    return local_tvf.LocalTvf(_Catalog(), str(root))


def test_paths_are_confined(tmp_path):
    root = tmp_path / "files"
    (root / "sub").mkdir(parents=True)
    (root / "a.csv").write_text("1\n")
    (root / "sub" / "b.csv").write_text("2\n")
    (tmp_path / "secret.csv").write_text("x\n")
    os.symlink(tmp_path / "secret.csv", root / "link.csv")
    tvf = _tvf(root)
    assert tvf.files("a.csv, sub/*.csv") == [root / "a.csv", root / "sub" / "b.csv"]
    assert tvf.files(str(root / "a.csv")) == [root / "a.csv"]
    for bad in ("../secret.csv", str(tmp_path / "secret.csv"), "link.csv", "sub/../../secret.csv",
                "../*.csv"):
        with pytest.raises(AnalysisError, match="not under user_files_secure_path"):
            tvf.files(bad)
    with pytest.raises(AnalysisError, match="file not found"):
        tvf.files("missing.csv")
    with pytest.raises(AnalysisError, match="No files match"):
        tvf.files("none*.csv")


def test_size_bound(tmp_path, monkeypatch):
    (tmp_path / "big.csv").write_text("1234567890\n" * 10)
    monkeypatch.setattr(local_tvf, "MAX_BYTES", 50)
    with pytest.raises(AnalysisError, match="load them with Stream Load"):
        _tvf(tmp_path).files("big.csv")
