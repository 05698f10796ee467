"""storage/process_memory.tune_allocator: glibc's malloc is tuned (the top pad included) where
the C library is glibc, and nowhere else."""

import platform

from storage import process_memory


def test_allocator_tuned_on_glibc():
    assert process_memory.tune_allocator() == (platform.libc_ver()[0] == "glibc")


def test_no_allocator_to_tune_is_not_an_error(monkeypatch):
    monkeypatch.setattr(process_memory, "_LIBC", None)
    assert process_memory.tune_allocator() is False
