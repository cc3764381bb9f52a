"""Fixtures of the browser tests: one `patrician serve` per test process on its embedded store
with its workers (bots and clocks play in it, as `make run` starts it), Debian's Chromium
driven by Playwright (`/usr/bin/chromium`, never a downloaded browser), and pages that fail
the test on any console error or warning, or any uncaught exception.

Screenshots go to `.artifacts/screenshots/` (or `PATRICIAN_ARTIFACTS`): artifacts to look
at, not goldens to compare with.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, sync_playwright

from tests.server.live import LiveServer, serving
from tests.web.browser import CHROMIUM, Watched

ARTIFACTS = Path(os.environ.get("PATRICIAN_ARTIFACTS", Path(__file__).parents[2] / ".artifacts"))


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Loopback allowed as a push service's address: the push tests run one there.
    allow = {"PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1"}
    yield from serving("web", tmp_path_factory.mktemp("web"), None, env=allow, timeout=30)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed browser test shows the end of its server's log (what its workers did and
    said): a page that waited in vain says why there."""
    report = yield
    server = getattr(item, "funcargs", {}).get("web_server")
    if report.failed and isinstance(server, LiveServer):
        report.sections.append(("the server's log, its end", server.log()))
    return report


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Per module: Playwright's sync API keeps an event loop running in this thread while it
    lives, and the tests of other modules that the same test process runs next call
    `asyncio.run`, which refuses to run inside one."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's package `chromium`")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture
def screenshots() -> Path:
    folder = ARTIFACTS / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def open_page(browser: Browser, web_server: LiveServer) -> Iterator[Callable[..., Watched]]:
    """Pages in contexts of their own (each its own localStorage: its own player); every
    console message of type error or warning, and every uncaught exception, fails the test."""
    contexts: list[BrowserContext] = []
    watched: list[Watched] = []

    def make(width: int = 1440, height: int = 900) -> Watched:
        context = browser.new_context(
            viewport={"width": width, "height": height}, base_url=web_server.url
        )
        contexts.append(context)
        page: Page = context.new_page()
        result = Watched(page, web_server.url)

        def console(message: ConsoleMessage) -> None:
            if message.type in ("error", "warning"):
                result.problems.append(f"console {message.type}: {message.text}")

        page.on("console", console)
        page.on("pageerror", lambda error: result.problems.append(f"uncaught: {error}"))
        page.on("response", result.keep)
        watched.append(result)
        return result

    yield make
    problems = [problem for each in watched for problem in each.unexpected()]
    for context in contexts:
        context.close()
    assert not problems, "the browser said:\n" + "\n".join(problems)
