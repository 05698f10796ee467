"""The vectorised text-row encoder writes the same packets as a plain per-row encoder."""

import random

import pyarrow as pa
import pytest

from server.protocol.text_rows import MAX_PAYLOAD, encode_rows


def _lenenc(n: int) -> bytes:
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def _reference(columns: list[pa.Array], seq: int) -> tuple[bytes, int]:
    out = bytearray()
    for row in zip(*[c.to_pylist() for c in columns]):
        payload = b"".join(b"\xfb" if v is None else _lenenc(len(v.encode())) + v.encode()
                           for v in row)
        while True:  # payloads of 16 MiB and more are split
            chunk, payload = payload[:MAX_PAYLOAD], payload[MAX_PAYLOAD:]
            out += len(chunk).to_bytes(3, "little") + bytes([seq]) + chunk
            seq = (seq + 1) % 256
            if len(chunk) < MAX_PAYLOAD:
                break
    return bytes(out), seq


@pytest.mark.parametrize("trial", range(20))
def test_random_columns_match_the_reference(trial):
    rng = random.Random(trial)
    n = rng.randint(1, 400)
    sizes = [0, 1, 7, 250, 251, 300, 65535, 65536][: rng.randint(1, 8)]
    columns = []
    for _ in range(rng.randint(1, 5)):
        nulls = rng.random() < 0.5
        values = [None if nulls and rng.random() < 0.2 else "é" * rng.choice(sizes)
                  for _ in range(n)]
        columns.append(pa.array(values, rng.choice([pa.string(), pa.large_string()])))
    start = rng.randint(0, n - 1)  # sliced arrays have an offset
    columns = [c.slice(start) for c in columns]
    seq = rng.randint(0, 255)
    payload, next_seq = encode_rows(columns, seq)
    assert (bytes(payload), next_seq) == _reference(columns, seq)


def test_all_null_and_empty():
    assert bytes(encode_rows([pa.nulls(2, pa.string())], 255)[0]) == b"\x01\x00\x00\xff\xfb" \
        b"\x01\x00\x00\x00\xfb"
    assert encode_rows([pa.array([], pa.string())], 3) == (b"", 3)


def test_a_row_of_16_mib_is_split_into_packets():
    columns = [pa.array(["y" * MAX_PAYLOAD, "z"]), pa.array(["a", None])]
    payload, next_seq = encode_rows(columns, 7)
    assert (bytes(payload), next_seq) == _reference(columns, 7)
    assert next_seq == 10  # two packets for the first row, one for the second
