"""SQL block rules (Doris's SqlBlockRuleMgr): CREATE / ALTER / DROP SQL_BLOCK_RULE, SHOW
SQL_BLOCK_RULE, and their enforcement.

A rule either names statements (`sql`, a Java-style regular expression searched in the
statement's text, or `sqlHash`, the MD5 of the text) or bounds what a query may scan
(`partition_num`, `tablet_num`, `cardinality`: partitions, tablets and rows of one OLAP scan
after pruning), never both. A rule applies to every account when `global` is true, else to the
accounts whose user property `sql_block_rules` names it; a disabled rule (`enable` false)
applies to none. A statement a rule names fails with `sql match regex sql block rule: r` /
`sql match hash sql block rule: r`; a scan over a bound fails with `sql hits sql block rule: r,
reach partition_num : n`, both before anything runs.

Journal operations (entries of `catalog/catalog.py:_APPLY`), state `Catalog.sql_block_rules`
({name: rule}):

    op                      data
    create_sql_block_rule   {name, sql, sqlHash, partition_num, tablet_num, cardinality,
                             global, enable}     ("NULL" for an unset sql / sqlHash, as Doris)
    alter_sql_block_rule    the same, the whole rule after the change
    drop_sql_block_rule     {names}
"""

from __future__ import annotations

import hashlib
import re

from catalog.errors import AnalysisError, CodedDdlError, DdlError
from catalog.names import check_common_name

NOT_SET = "NULL"  # SqlBlockUtil.STRING_DEFAULT: an unset sql / sqlHash, shown as is
PROPERTIES = ("sql", "sqlHash", "partition_num", "tablet_num", "cardinality", "global",
              "enable")
LIMITS = ("partition_num", "tablet_num", "cardinality")
SHOW_COLUMNS = ["Name", "Sql", "SqlHash", "PartitionNum", "TabletNum", "Cardinality", "Global",
                "Enable"]
_BOTH = ("sql/sqlHash and partition_num/tablet_num/cardinality cannot be set in one rule.", 5084)


def create_rule(cat, name: str, props: dict[str, str], if_not_exists: bool = False) -> None:
    check_common_name("SQL BLOCK RULE NAME", name)
    _check_keys(props)
    sql, sql_hash = props.get("sql", NOT_SET), props.get("sqlHash", NOT_SET)
    _check_one_of(sql, sql_hash)
    has_limits = any(props.get(k) for k in LIMITS)
    if (sql != NOT_SET or sql_hash != NOT_SET) == has_limits:
        raise CodedDdlError(*_BOTH)
    rule = {"name": name, "sql": sql, "sqlHash": sql_hash,
            **{k: _long(props, k, 0) for k in LIMITS},
            "global": _bool(props, "global", False), "enable": _bool(props, "enable", True)}
    # a rule that blocked the DDL naming it could never be dropped (CreateSqlBlockRuleStmt)
    if sql != NOT_SET and _pattern(sql).search(name):
        raise AnalysisError("sql of SQL_BLOCK_RULE should not match its name")
    with cat.lock:
        if name in cat.sql_block_rules:
            if if_not_exists:
                return
            raise DdlError(f"the sql block rule {name} already create")
        _check_limits(rule)
        cat._log("create_sql_block_rule", rule)  # noqa: SLF001


def alter_rule(cat, name: str, props: dict[str, str]) -> None:
    """Only the properties given change (SqlBlockRuleMgr.alterSqlBlockRule)."""
    _check_keys(props)
    sql, sql_hash = props.get("sql", NOT_SET), props.get("sqlHash", NOT_SET)
    _check_one_of(sql, sql_hash)
    if (sql != NOT_SET or sql_hash != NOT_SET) and any(props.get(k) for k in LIMITS):
        raise CodedDdlError(*_BOTH)
    if sql != NOT_SET:
        _pattern(sql)
    changes = {k: _long(props, k, None) for k in LIMITS if props.get(k)}
    for k in ("global", "enable"):
        if props.get(k):
            changes[k] = props[k].lower() == "true"  # Boolean.parseBoolean
    if sql != NOT_SET:
        changes["sql"] = sql
    if sql_hash != NOT_SET:
        changes["sqlHash"] = sql_hash
    with cat.lock:
        origin = cat.sql_block_rules.get(name)
        if origin is None:
            raise DdlError(f"the sql block rule {name} not exist")
        rule = {**origin, **changes}
        _check_limits(rule)
        if rule["sql"] != NOT_SET and rule["sqlHash"] != NOT_SET:
            raise AnalysisError("Only sql or sqlHash can be configured")
        if (rule["sql"] != NOT_SET or rule["sqlHash"] != NOT_SET) and any(rule[k] for k in LIMITS):
            raise CodedDdlError(*_BOTH)
        cat._log("alter_sql_block_rule", rule)  # noqa: SLF001


def drop_rules(cat, names: list[str], if_exists: bool = False) -> None:
    with cat.lock:
        missing = [n for n in names if n not in cat.sql_block_rules]
        if missing and not if_exists:
            raise DdlError(f"the sql block rule {missing[0]} not exist")
        present = [n for n in names if n in cat.sql_block_rules]
        if present:
            cat._log("drop_sql_block_rule", {"names": present})  # noqa: SLF001


def check_rules_exist(cat, names: list[str]) -> None:
    """The rules a user property `sql_block_rules` names must exist (UserProperty.update)."""
    with cat.lock:
        for n in names:
            if n not in cat.sql_block_rules:
                raise DdlError(f"the sql block rule {n} not exist")


def show_rows(cat, name: str | None) -> list[tuple]:
    """SHOW SQL_BLOCK_RULE [FOR name]: every rule, or the one named (none if unknown)."""
    with cat.lock:
        rules = [cat.sql_block_rules[n] for n in sorted(cat.sql_block_rules)
                 if name is None or n == name]
    return [(r["name"], r["sql"], r["sqlHash"], str(r["partition_num"]), str(r["tablet_num"]),
             str(r["cardinality"]), _text(r["global"]), _text(r["enable"])) for r in rules]


# -- enforcement -------------------------------------------------------------------------------
def match_sql(cat, text: str, bound: list[str]) -> None:
    """SqlBlockRuleMgr.matchSql: a statement's text against the enabled rules that apply to
    its account (the global ones and the ones `bound` to it)."""
    rules = _applying(cat, bound)
    if not rules:
        return
    digest = None
    for rule in rules:
        if rule["sqlHash"] not in ("", NOT_SET):
            digest = digest or hashlib.md5(text.encode()).hexdigest()
            if rule["sqlHash"] == digest:
                raise AnalysisError(f"sql match hash sql block rule: {rule['name']}")
        elif rule["sql"] not in ("", NOT_SET) and _pattern(rule["sql"]).search(text):
            raise AnalysisError(f"sql match regex sql block rule: {rule['name']}")


def check_limitations(cat, partitions: int, tablets: int, cardinality: int,
                      bound: list[str]) -> None:
    """SqlBlockRuleMgr.checkLimitations for one OLAP scan."""
    for rule in _applying(cat, bound):
        counts = {"partition_num": partitions, "tablet_num": tablets, "cardinality": cardinality}
        for k in LIMITS:
            if rule[k] != 0 and rule[k] < counts[k]:
                raise AnalysisError(f"sql hits sql block rule: {rule['name']}, reach {k} : "
                                    f"{rule[k]}")


def has_limitations(cat) -> bool:
    rules = cat.sql_block_rules
    return bool(rules) and any(r[k] for r in list(rules.values()) for k in LIMITS)


def _applying(cat, bound: list[str]) -> list[dict]:
    rules = cat.sql_block_rules
    if not rules:
        return []
    with cat.lock:
        found = [r for r in rules.values() if r["global"]]
        found += [rules[n] for n in bound if n in rules and not rules[n]["global"]]
    return [r for r in found if r["enable"]]


# -- property checks ---------------------------------------------------------------------------
_PATTERNS: dict[str, re.Pattern] = {}


def _pattern(sql: str) -> re.Pattern:
    """The rule's expression (Java's Pattern.compile: case-sensitive, searched anywhere)."""
    compiled = _PATTERNS.get(sql)
    if compiled is None:
        try:
            compiled = re.compile(sql)
        except re.error as e:
            raise AnalysisError(f"Invalid regular expression in sql: {sql}: {e}") from None
        _PATTERNS[sql] = compiled
    return compiled


def _check_keys(props: dict[str, str]) -> None:
    if not props:
        raise AnalysisError("Not set properties")
    for k in props:
        if k not in PROPERTIES:
            raise AnalysisError(f"{k} is invalid property")


def _check_one_of(sql: str, sql_hash: str) -> None:
    if sql != NOT_SET and sql_hash != NOT_SET:
        raise AnalysisError("Only sql or sqlHash can be configured")


def _check_limits(rule: dict) -> None:
    for k in LIMITS:
        if rule[k] < 0:
            raise DdlError(f"the value of {k} can't be a negative")


def _long(props: dict[str, str], key: str, default: int | None) -> int | None:
    value = props.get(key)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise AnalysisError(f"{key} should be a long") from None


def _bool(props: dict[str, str], key: str, default: bool) -> bool:
    value = props.get(key)
    if not value:
        return default
    if value.lower() not in ("true", "false"):
        raise AnalysisError(f"{key} should be a boolean")
    return value.lower() == "true"


def _text(flag: bool) -> str:
    return "true" if flag else "false"


def _apply_create(cat, data: dict) -> None:
    cat.sql_block_rules[data["name"]] = dict(data)


def _apply_drop(cat, data: dict) -> None:
    for n in data["names"]:
        cat.sql_block_rules.pop(n, None)


APPLY = {"create_sql_block_rule": _apply_create, "alter_sql_block_rule": _apply_create,
         "drop_sql_block_rule": _apply_drop}
