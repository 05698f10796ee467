"""The differential SQL fuzzer in CI: a fixed seed, a bounded number of checks (about 1,500
checks, 2,000+ queries; ~1 minute), against the shared server. Longer runs:
scripts/fuzz_sql.py. Every finding must become a golden test (tests/sql/fuzz_findings.test)
and a fix; the message lists each with its SQL."""

from __future__ import annotations

import os

from fuzz_oracles import Fuzzer, summary

SEED = int(os.environ.get("MINIDORIS_FUZZ_SEED", "20261125"))
CHECKS = int(os.environ.get("MINIDORIS_FUZZ_CHECKS", "1500"))


def test_differential_fuzz(server):
    conn = server.connect()
    try:
        report = Fuzzer(conn, SEED, db="fuzz_ci").run(CHECKS, queries_per_setup=250)
    finally:
        conn.close()
    assert report.checks > CHECKS * 0.9, summary(report)
    assert not report.findings, summary(report)
