"""The journal: appended entries replay; a torn tail is cut; checkpoints reset the log."""

from catalog.journal import Journal


def test_replay_and_torn_tail(tmp_path):
    j = Journal(tmp_path)
    j.append("a", {"x": 1})
    j.append("b", {"x": 2})
    j.close()
    with open(tmp_path / "edits.log", "ab") as f:
        f.write(b"\x40\x00\x00\x00garbage")  # a crash mid-append
    j2 = Journal(tmp_path)
    assert j2.load_image() is None
    assert list(j2.replay()) == [("a", {"x": 1}), ("b", {"x": 2})]
    j2.append("c", {"x": 3})
    j2.close()
    j3 = Journal(tmp_path)
    assert [op for op, _ in j3.replay()] == ["a", "b", "c"]


def test_checkpoint(tmp_path):
    j = Journal(tmp_path)
    j.append("a", {})
    j.checkpoint({"state": 1})
    j.append("b", {})
    j.close()
    j2 = Journal(tmp_path)
    assert j2.load_image() == {"state": 1}
    assert [op for op, _ in j2.replay()] == ["b"]


class _FailingFile:
    """The log file of a disk that fills up in the middle of a write: half of it is written,
    then ENOSPC."""

    def __init__(self, real):
        self.real = real

    def write(self, data):
        self.real.write(bytes(data[:len(data) // 2]))
        raise OSError(28, "No space left on device")

    def fileno(self):
        return self.real.fileno()


def test_failed_append_leaves_no_partial_frame(tmp_path):
    """An append that fails midway is cut off: the entries acknowledged after it survive."""
    j = Journal(tmp_path)
    j.append("a", {"x": 1})
    real = j._file
    j._file = _FailingFile(real)
    try:
        j.append("b", {"x": 2})
    except OSError as exc:
        assert exc.errno == 28
    else:
        raise AssertionError("the append did not fail")
    j._file = real
    j.append("c", {"x": 3})  # acknowledged after the failure
    j.close()
    j2 = Journal(tmp_path)
    assert list(j2.replay()) == [("a", {"x": 1}), ("c", {"x": 3})]
    assert j2.seq == 2
