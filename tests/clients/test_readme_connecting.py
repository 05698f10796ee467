"""The README's "Connecting" examples, run as written (port 9030 and database example_db
replaced by the test server's): the sh blocks with bash, the python blocks with this Python,
the dbt profile parsed as YAML-like `key: value` lines and checked against test_dbt's."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks(lang: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Connecting", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", section, flags=re.S)


def _localise(code: str, server, db: str) -> str:
    return code.replace("9030", str(server.port)).replace("example_db", db)


def test_readme_has_the_examples():
    assert len(_blocks("sh")) == 1 and len(_blocks("python")) == 3 and len(_blocks("yaml")) == 1


def test_readme_shell_example(server, fresh_db):
    if not shutil.which("mysql"):
        pytest.skip("mysql CLI not installed")
    proc = subprocess.run(["bash", "-euc", _localise(_blocks("sh")[0], server, fresh_db)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Doris version" in proc.stdout


def test_readme_python_examples(server, fresh_db):
    pytest.importorskip("pydoris")
    pytest.importorskip("pyodbc")
    outputs = []
    for code in _blocks("python"):
        proc = subprocess.run([sys.executable, "-c", _localise(code, server, fresh_db)],
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs.append(proc.stdout)
    assert "((1, \"it's\"),)" in outputs[0] and "['readme_t']" in outputs[0]
    assert re.match(r"\(1, ?\)", outputs[1].strip()), outputs[1]


def test_readme_dbt_profile_matches_the_dbt_test():
    profile = _blocks("yaml")[0]
    assert "type: doris" in profile and "port: 9030" in profile and "username: root" in profile
