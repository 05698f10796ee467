"""The edit log (journal) and image checkpoints that make the catalog durable.

Layout under `meta_dir`:

    image.json      the whole catalog as of journal entry `seq` (written to image.json.tmp,
                    fsynced, renamed: a crash leaves the old image or the new one)
    edits.log       entries after the image, each framed as
                    +----------+----------+------------------------------+
                    | len (u32)| crc (u32)| JSON {"seq", "op", "data"}    |
                    +----------+----------+------------------------------+
                    little-endian; crc is zlib.crc32 of the JSON bytes.

An entry is appended and fsynced before the statement that made it returns, so an acknowledged
change survives `kill -9`. On replay a torn or corrupt tail (a crash mid-append: never
acknowledged) is cut off. `checkpoint()` writes a new image and starts an empty log.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import zlib
from pathlib import Path
from typing import Any, Iterator

from catalog.debug_points import armed, crash, debug_point
from storage import cpu_slots
from storage.durable import fsync_path

_HEADER = struct.Struct("<II")


class Journal:
    def __init__(self, meta_dir: Path):
        self.dir = meta_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "edits.log"
        self.image_path = self.dir / "image.json"
        self.seq = 0
        self.entries_since_image = 0
        self._lock = threading.Lock()
        self._file = None
        self._broken: OSError | None = None  # a failed append could not be cut off

    # -- reading at start-up --------------------------------------------------------------------
    def load_image(self) -> dict | None:
        if not self.image_path.exists():
            return None
        image = json.loads(self.image_path.read_text())
        self.seq = image["seq"]
        return image["catalog"]

    def replay(self) -> Iterator[tuple[str, Any]]:
        """Yield (op, data) for each intact entry after the image; cut a torn tail."""
        if not self.log_path.exists():
            return
        raw = self.log_path.read_bytes()
        pos = 0
        good_end = 0
        while pos + _HEADER.size <= len(raw):
            length, crc = _HEADER.unpack_from(raw, pos)
            body = raw[pos + _HEADER.size: pos + _HEADER.size + length]
            if len(body) < length or zlib.crc32(body) != crc:
                break
            entry = json.loads(body)
            pos += _HEADER.size + length
            good_end = pos
            if entry["seq"] <= self.seq:
                continue
            self.seq = entry["seq"]
            self.entries_since_image += 1
            yield entry["op"], entry["data"]
        if good_end < len(raw):
            with open(self.log_path, "r+b") as f:
                f.truncate(good_end)
                f.flush()
                os.fsync(f.fileno())

    # -- writing --------------------------------------------------------------------------------
    def append(self, op: str, data: Any) -> None:
        self.append_many([(op, data)])

    def append_many(self, entries: list[tuple[str, Any]], sync: bool = True,
                    hand_off_slot: bool = False) -> None:
        """Append entries in order with one write and one fsync (a batch of publishes): all
        of them are durable when this returns; a crash before leaves a prefix of them, whose
        statements were not acknowledged. `sync=False`: written to the OS only (survives the
        process's death, not the machine's), for entries nothing acknowledged depends on.
        `hand_off_slot`: the caller holds no catalog lock, so its CPU slot goes to another
        statement while it writes (storage/cpu_slots.py; taken back once the journal's lock is
        released, so no thread waits for the journal behind a slot)."""
        if hand_off_slot:
            with cpu_slots.blocking():
                self._append(entries, sync)
        else:
            self._append(entries, sync)

    def _append(self, entries: list[tuple[str, Any]], sync: bool) -> None:
        with self._lock:
            if self._broken is not None:
                raise OSError(f"the journal {self.log_path} cannot be appended to: "
                              f"{self._broken}")
            if self._file is None:
                # unbuffered: a failed write leaves nothing in a buffer to be flushed later
                self._file = open(self.log_path, "ab", buffering=0)
            seq, end = self.seq, os.fstat(self._file.fileno()).st_size
            frames = []
            for op, data in entries:
                self.seq += 1
                body = json.dumps({"seq": self.seq, "op": op, "data": data},
                                  separators=(",", ":")).encode()
                frames.append(_HEADER.pack(len(body), zlib.crc32(body)) + body)
            data = b"".join(frames)
            try:
                if armed("journal.torn_append"):  # a crash in the middle of the write
                    self._write(data[:len(data) // 2])
                    crash()
                self._write(data)
                debug_point("journal.before_fsync")
                if sync:
                    os.fsync(self._file.fileno())
            except BaseException:
                self._rewind(seq, end)
                raise
            self.entries_since_image += len(entries)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self._file.write(view):]

    def _rewind(self, seq: int, end: int) -> None:
        """A failed append (a full disk, an I/O error): cut what it wrote, so that the next
        entry follows the last good one. Left in the file, a partial frame would end the
        replay there, and every entry acknowledged after it would be lost at the restart. A
        log that cannot be cut takes no more entries."""
        self.seq = seq
        try:
            os.ftruncate(self._file.fileno(), end)
            os.fsync(self._file.fileno())
        except OSError as exc:
            self._broken = exc

    def checkpoint(self, catalog_state: dict) -> None:
        """Write an image of `catalog_state` (taken under the catalog lock) and reset the log."""
        with self._lock:
            tmp = self.image_path.with_suffix(".json.tmp")
            # dumps, not dump: json.dump encodes in pure Python, chunk by chunk (~10x slower)
            text = json.dumps({"seq": self.seq, "catalog": catalog_state}, separators=(",", ":"))
            with open(tmp, "w") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            debug_point("checkpoint.before_rename")
            os.replace(tmp, self.image_path)
            fsync_path(self.dir)
            debug_point("checkpoint.before_truncate")
            if self._file is not None:
                self._file.close()
                self._file = None
            # Entries up to self.seq are in the image; replay skips them even if this truncate
            # is lost in a crash.
            with open(self.log_path, "wb") as f:
                f.flush()
                os.fsync(f.fileno())
            self.entries_since_image = 0

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
