"""An IN list of k values is estimated as the OR of k equalities it stands for (planner/
or_to_in.py rewrites such ORs to IN), at most IN's default: join orders do not change with the
spelling."""

import sqlglot

from planner.statistics import selectivity


def test_in_estimates_as_its_or():
    for k in (1, 2, 3):
        values = ", ".join(str(i) for i in range(k))
        ors = " OR ".join(f"a = {i}" for i in range(k))
        assert abs(selectivity(sqlglot.parse_one(f"a IN ({values})")) -
                   selectivity(sqlglot.parse_one(ors))) < 1e-12
    assert selectivity(sqlglot.parse_one("a IN (1, 2, 3, 4, 5, 6)")) == 1 / 3
