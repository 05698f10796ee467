"""Randomized: a merge-on-write tablet against a Python dict model of a Unique table.

Loads with overlapping keys (NULL keys too, some written in several flushes), a sequence
column with NULLs and ties, delete-sign rows, DELETE predicates, cumulative and base
compactions with loads published while they merge, and snapshots held across all of it: every
read (rows, a value filter, count and sum) equals the model at the read's version, and a
restore from the journaled metas gives the same delete bitmap.
"""

import random

import pytest
from storage_testutil import column, table_for

from storage import ColumnPredicate as P
from storage import ScanStats, StorageEngine, TabletSchema
from storage.rowset import RowsetMeta
from storage.schema import DELETE_SIGN

SEQ = "__DORIS_SEQUENCE_COL__"
VALUES = [column("v", "BIGINT"), column(DELETE_SIGN, "TINYINT", nullable=False),
          column(SEQ, "INT")]
# one INT key (looked up by binary search), or (INT, VARCHAR) keys (by a hash join)
SCHEMAS = {False: TabletSchema([column("k", "INT", key=True), *VALUES], "UNIQUE_KEYS",
                               sequence_column=SEQ, merge_on_write=True),
           True: TabletSchema([column("k", "INT", key=True),
                               column("s", "VARCHAR", 2, key=True), *VALUES], "UNIQUE_KEYS",
                              sequence_column=SEQ, merge_on_write=True)}
LIVE = P(DELETE_SIGN, "=", (0,))


def wins(new_seq, old_seq) -> bool:
    """The sort the memtable and the bitmap share: NULL smallest, ties to the later row."""
    if old_seq is None:
        return True
    return new_seq is not None and new_seq >= old_seq


def apply_rows(model: dict, rows: list[tuple], version: int) -> None:
    for k, v, sign, seq in rows:
        old = model.get(k)
        if old is None or wins(seq, old[2]):
            model[k] = (v, sign, seq, version)


def order(row):
    return tuple((x is not None, x) for x in row[0])


def visible(model: dict, pred=lambda v: True) -> list[tuple]:
    return sorted(((k, v) for k, (v, sign, _, _) in model.items() if sign == 0 and pred(v)),
                  key=order)


def rows_of(table, keys: list[str]) -> list[tuple]:
    return sorted(zip(zip(*(table.column(k).to_pylist() for k in keys)),
                      table.column("v").to_pylist()), key=order)


def random_rows(rng: random.Random, n: int, composite: bool) -> list[tuple]:
    out = []
    for _ in range(n):
        k = (None if rng.random() < 0.03 else rng.randrange(40),)
        if composite:
            k += (rng.choice([None, "", "a", "b"]),)
        seq = None if rng.random() < 0.15 else rng.randrange(6)
        sign = 1 if rng.random() < 0.1 else 0
        out.append((k, rng.randrange(-50, 50), sign, seq))
    return out


def as_table(schema: TabletSchema, rows: list[tuple]):
    data = {name: [r[0][i] for r in rows] for i, name in enumerate(schema.key_names)}
    return table_for(schema, {**data, "v": [r[1] for r in rows],
                              DELETE_SIGN: [r[2] for r in rows], SEQ: [r[3] for r in rows]})


@pytest.mark.parametrize("composite", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_merge_on_write_tablet_matches_a_dict_model(tmp_path, seed, composite):
    SCHEMA = SCHEMAS[composite]
    keys = SCHEMA.key_names
    rng = random.Random(seed)
    engine = StorageEngine(str(tmp_path), page_size=512, short_key_interval=8,
                           page_cache_bytes=64 << 20)
    tablet = engine.create_tablet(1, SCHEMA)
    model: dict = {}
    history: dict[int, dict] = {1: {}}
    version = 1
    held = []  # (snapshot, version)

    def publish(meta) -> None:
        nonlocal version
        version += 1
        tablet.prepare_publish(meta, version)
        tablet.publish(meta, version)

    def load() -> None:
        flushes = [random_rows(rng, rng.randrange(1, 25), composite)
                   for _ in range(rng.choice([1, 1, 2, 3]))]
        writer = tablet.open_rowset_writer(version + 1)
        for rows in flushes:
            writer.flush(as_table(SCHEMA, rows))
        publish(writer.finish())
        for rows in flushes:
            apply_rows(model, rows, version)

    def delete() -> None:
        nonlocal version
        x, below = rng.randrange(40), rng.random() < 0.3
        meta = tablet.write_delete([P("k", "<" if below else "=", (x,))], version + 1)
        version += 1
        tablet.publish(meta, version)
        doomed = [k for k in model if k[0] is not None and (k[0] < x if below else k[0] == x)]
        for k in doomed:
            del model[k]

    def compact() -> None:
        published = tablet.rowsets()
        if len(published) < 2:
            return
        if rng.random() < 0.4:
            inputs = published[:rng.randrange(2, len(published) + 1)]
        else:  # a cumulative compaction never takes a DELETE version (it would drop it)
            start = rng.randrange(0, len(published) - 1)
            inputs = published[start:start + rng.randrange(2, 4)]
            if any(r.is_delete for r in inputs) or len(inputs) < 2:
                return
        base = inputs[0].rowset_id == published[0].rowset_id  # as Tablet.compact decides
        if rng.random() < 0.5:
            held.append((tablet.capture(version), version))
        out = tablet.compact(inputs, 0)
        for _ in range(rng.randrange(0, 3)):  # loads published while it merged
            load()
            history[version] = dict(model)
        tablet.carry_delete_bitmap(out, inputs)
        assert tablet.replace_rowsets([r.rowset_id for r in inputs], out)
        if base:  # from the first version: a delete-sign row has nothing left to hide, it goes
            for k in [k for k, (_, sign, _, at) in model.items()
                      if sign == 1 and at <= out.end_version]:
                del model[k]

    def check(source, at: int) -> None:
        expect = history[at]
        assert rows_of(source.read([*keys, "v"], [LIVE], ScanStats()), keys) == visible(expect)
        t = rng.randrange(-50, 50)
        got = source.read([*keys, "v"], [LIVE, P("v", ">", (t,))], ScanStats())
        assert rows_of(got, keys) == visible(expect, lambda v: v > t)
        assert source.read([], [LIVE], ScanStats()).num_rows == len(visible(expect))

    for _ in range(30):
        op = rng.random()
        if op < 0.6:
            load()
        elif op < 0.7:
            delete()
        else:
            compact()
        history[version] = dict(model)
        with tablet.capture(version) as snap:
            check(snap, version)
        for snap, at in held:
            check(snap, at)
        if held and rng.random() < 0.3:
            held.pop(0)[0].release()
    for snap, _ in held:
        snap.release()
    # a restart restores the same bitmap from the journaled metas
    metas = [(RowsetMeta.from_dict(r.to_dict()), r.end_version) for r in tablet.rowsets()]
    before = [(e.rowset_id, e.segment_no, e.version, list(e.rows))
              for e in tablet.delete_bitmap.entries({r.rowset_id for r, _ in metas})]
    again = StorageEngine(str(tmp_path), page_size=512, short_key_interval=8,
                           page_cache_bytes=64 << 20)
    restored = again.restore_tablet(1, SCHEMA, metas)
    assert [(e.rowset_id, e.segment_no, e.version, list(e.rows))
            for e in restored.delete_bitmap.entries()] == before
    with restored.capture(version) as snap:
        check(snap, version)
