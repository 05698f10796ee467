"""Fixtures of the web UI tests: Debian's chromium driven by Playwright (browsers cannot be
downloaded here: `apt-get install chromium`, .ci/run does), a fresh page per test and a directory for
screenshots (webui_support.py has the helpers).

Screenshots go to $MINIDORIS_WEBUI_ARTIFACTS, else to a `webui-screenshots` dir under pytest's
temporary directory (its path is printed at the end of the run with -s, and kept by pytest for
the last three runs).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webui_support import base_url

CHROMIUM = os.environ.get("MINIDORIS_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Path:
    given = os.environ.get("MINIDORIS_WEBUI_ARTIFACTS")
    path = Path(given) if given else tmp_path_factory.mktemp("webui-screenshots")
    path.mkdir(parents=True, exist_ok=True)
    print(f"\nweb UI screenshots: {path}")
    return path


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    """A fresh browser context (no cookies) on the server's HTTP port."""
    # bypass_csp: the test's own waits evaluate script text, which the UI's CSP forbids; it
    # also shows the pages escape data without the CSP's help
    context = browser.new_context(base_url=base_url(server), bypass_csp=True,
                                  viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()
