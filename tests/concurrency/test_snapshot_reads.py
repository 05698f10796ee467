"""Snapshot reads under concurrent loads and compaction (issue 19): readers never see a state
that was not published. The mix of scripts/stress/snapshot_reads.py, run for a short time
against a server that compacts as often as it can: every read must show one whole number of
batches in every group, never fewer than were acknowledged before it started nor fewer than
the reader saw before."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.stress.snapshot_reads import STRESS_CONFIG, check_read, run_mix  # noqa: E402

SECONDS = 12


def test_check_read_flags_torn_and_shrinking_reads():
    whole = [(g, 20, 20) for g in range(10)]
    assert check_read(whole, 1, 3, 0) == (2, None)
    torn = [(g, 20 if g else 10, 20 if g else 10) for g in range(10)]
    assert "torn" in check_read(torn, 0, 9, 0)[1]
    assert "went down" in check_read(whole, 0, 9, 3)[1]
    assert "outside" in check_read(whole, 3, 9, 0)[1]


def test_reads_stay_consistent_while_compaction_swaps_rowsets(server_factory, tmp_path):
    conf = tmp_path / "compact_often.conf"
    conf.write_text("".join(f"{k} = {v}\n" for k, v in STRESS_CONFIG.items()))
    srv = server_factory(extra_args=("--config", str(conf))).start()
    result = run_mix(srv.host, srv.port, "snap", SECONDS, writers=4, readers=4, buckets=8)
    assert not result.errors, result.errors[:5]
    assert result.anomalies == [], result.anomalies[:10]
    assert result.inserts >= 10 and result.queries >= 10, result.summary()
    assert result.final_batches == result.inserts
    # compaction really ran meanwhile: far fewer rowsets than loads per tablet
    conn = srv.connect("snap")
    with conn.cursor() as cur:
        cur.execute("SHOW TABLETS FROM t")
        versions = [int(r[15]) for r in cur.fetchall()]  # VersionCount
    conn.close()
    assert len(versions) == 8 and max(versions) < result.inserts / 2, (sorted(versions)[-3:], len(versions), result.inserts)
