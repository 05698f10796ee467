"""server/malloc_tuning.py: the top pad is set where the C library is glibc, and nowhere else."""

import platform

from server import malloc_tuning


def test_top_pad_set_on_glibc():
    assert malloc_tuning.apply() == (platform.libc_ver()[0] == "glibc")


def test_no_allocator_to_tune_is_not_an_error(monkeypatch):
    def missing(*_args, **_kwargs):
        raise OSError("no C library")
    monkeypatch.setattr(malloc_tuning.ctypes, "CDLL", missing)
    assert malloc_tuning.apply() is False
