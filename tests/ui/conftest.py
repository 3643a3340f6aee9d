from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import CHROMIUM, CHROMIUM_ARGS, KEY, Live, build_workspace, live_server

# Init script (injected by the browser driver, so the page's CSP does not apply to it): records
# every CSP violation and every dialog the page tries to open.
WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


SERVED = {"live", "keyed", "browser", "watched"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests with a server and a browser are e2e, and skipped without Debian's Chromium."""
    for item in items:
        served = SERVED & set(getattr(item, "fixturenames", ()))
        if "tests/ui/" in str(item.fspath).replace("\\", "/") and served:
            item.add_marker(pytest.mark.e2e)
            if not CHROMIUM.exists() and served & {"browser", "watched"}:
                item.add_marker(
                    pytest.mark.skip(
                        reason="/usr/bin/chromium is missing: apt-get install chromium "
                        "(the browser tests drive Debian's Chromium, no download)"
                    )
                )


@pytest.fixture(scope="session")
def ui_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("ui-template") / "ws"
    build_workspace(home)
    return home


@pytest.fixture(scope="module")
def live(ui_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The keyless loopback demo server over a copy of the workspace."""
    home = tmp_path_factory.mktemp("ui-live") / "ws"
    shutil.copytree(ui_template, home)
    with live_server(home) as server:
        yield server


@pytest.fixture(scope="module")
def keyed(ui_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """A server with one API key (team ``alpha``): the UI asks to log in."""
    home = tmp_path_factory.mktemp("ui-keyed") / "ws"
    shutil.copytree(ui_template, home)
    with live_server(home, {KEY: "alpha"}) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Watched:
    """A page with everything a test asserts on recorded: console errors, page errors, dialogs
    and every request URL."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        page.on("dialog", self._dialog)
        page.on("request", lambda r: self.requests.append(r.url))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def csp_violations(self) -> list[str]:
        return list(self.page.evaluate("window.__csp || []"))

    def assert_clean(self, base_url: str) -> None:
        assert self.console == [], self.console
        assert self.dialogs == [], self.dialogs
        assert self.csp_violations() == []
        outside = [u for u in self.requests if not u.startswith((base_url + "/", "data:", "blob:"))]
        assert outside == [], outside


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ja-JP")
    context.add_init_script(WATCH)
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield Watched(page)
    context.close()
