"""The JDBC driver the client tests use (MariaDB Connector/J, Debian's libmariadb-java) and
the check that Java and the driver are installed (a failure in CI, a skip elsewhere)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

JAR = Path("/usr/share/java/mariadb-java-client.jar")


def require_java() -> None:
    missing = [what for what, ok in (("javac", shutil.which("javac")), ("java", shutil.which("java")),
                                     (str(JAR), JAR.exists())) if not ok]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"JDBC test needs {', '.join(missing)} in CI (.ci/run installs them)")
        pytest.skip(f"missing {', '.join(missing)} (apt-get install default-jdk-headless libmariadb-java)")
