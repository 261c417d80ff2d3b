"""Check the built course website in a real browser, as a reader would see it.

Usage::

    .venv/bin/python site/browser_check.py [BUILT_HTML_DIR] [--screenshots DIR]

The built folder (default `site/_build/html`) is served over HTTP on 127.0.0.1 and every
page is opened in Chromium through Playwright. On each page the check records console
errors, uncaught script errors, failed requests and HTTP errors; it follows every internal
link (the file and its `#fragment` must exist) and checks that every image has loaded.
On the lessons it also checks that the graph drawings are there and have a size, it runs
one search on the search page, and it saves two full-page screenshots to look at.

Exit status: 0 when the site is clean, 1 when a problem was found (one line each), 3 when
the check cannot run here (no Chromium, or no Playwright): `make site-test` then fails with
that message, and `make test` skips the check, saying so, when no Chromium is installed.
"""

from __future__ import annotations

import argparse
import functools
import html.parser
import http.server
import json
import os
import re
import shutil
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

EXIT_CLEAN, EXIT_PROBLEMS, EXIT_SKIPPED = 0, 1, 3

REPO = Path(__file__).resolve().parents[1]
DEFAULT_HTML = REPO / "site" / "_build" / "html"
DEFAULT_SHOTS = REPO / "site" / "_build" / "screenshots"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")

LESSON_PAGE = re.compile(r"^lessons/(\d\d_[^/]+)\.html$")
# Lessons that must show graph drawings even when their notebook cannot be read here.
LESSONS_WITH_DRAWINGS = ("01_variables_and_graphs",)
# (word, page it must lead to): the first word still found in its lesson is searched for.
SEARCHES = (("Toeplitz", "lessons/15_convolutions.html"),
            ("backward", "lessons/02_backward.html"))
SCREENSHOTS = {"home.png": "site/index.html", "lesson.png": "lessons/02_backward.html"}

LOAD_TIMEOUT_MS = 15_000
SEARCH_TIMEOUT_MS = 20_000
VIEWPORT = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}  # a phone held upright, in CSS pixels
# How far the page is wider than the window, in CSS pixels (0 when it does not scroll
# sideways; wide code and tables scroll inside their own boxes and do not count).
JS_SIDEWAYS = "() => document.documentElement.scrollWidth - window.innerWidth"
# No sandbox (root in a container); no host but 127.0.0.1 resolves, so nothing is fetched
# from outside the site: the result does not depend on the network, and whatever a page
# would load from elsewhere fails, which is reported.
BROWSER_ARGS = ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
EXTERNAL = ("http://", "https://", "//", "mailto:", "javascript:", "tel:", "data:")

# In the browser: every link as written and as resolved; <link> too (rel="next", "prev",
# "search" point at pages; a stylesheet's link is a file that must exist as well).
JS_LINKS = """() => Array.from(document.querySelectorAll('a[href], link[href]'),
                              a => [a.getAttribute('href'), a.href])"""
# In the browser: each image, whether it loaded, its size on screen and where it sits.
JS_IMAGES = """() => Array.from(document.images, img => {
  const box = img.getBoundingClientRect();
  return {src: img.getAttribute('src') || '', complete: img.complete,
          naturalWidth: img.naturalWidth, width: box.width, height: box.height,
          inMain: img.closest('main, article, .bd-article') !== null,
          hidden: img.closest('.only-dark, .only-light, details:not([open])') !== null};
})"""
# In the browser: the graph drawings of a lesson. MyST-NB renders a stored output that has
# both image/svg+xml and image/png as <img src="../_images/HASH.svg"> in .cell_output; an
# inline <svg> holding Graphviz's <g class="graph"> is counted too, should that ever change.
JS_DRAWINGS = """() => Array.from(
  document.querySelectorAll('.cell_output img[src$=".svg"], .cell_output svg:has(> g.graph)'),
  el => { const box = el.getBoundingClientRect();
          return {src: el.getAttribute('src') || '<svg>', width: box.width, height: box.height,
                  folded: el.closest('details:not([open])') !== null}; })"""
# In the browser: Sphinx's search is over when it has written its summary line.
JS_SEARCH_DONE = """() => {
  const status = document.querySelector('#search-results .search-summary');
  return status !== null && /finished|did not match/i.test(status.innerText);
}"""
JS_SEARCH_LINKS = """() => Array.from(document.querySelectorAll('#search-results ul.search li a'),
                                     a => a.href)"""


@dataclass(frozen=True)
class Problem:
    """One thing wrong on one page: what, what was expected and what was found."""

    page: str
    what: str
    expected: str
    found: str


@dataclass
class Report:
    """What the check saw, for the summary, and the problems it found."""

    pages: list[str] = field(default_factory=list)
    links: int = 0
    images: int = 0
    drawings: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    search: str = "not run"
    screenshots: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def add(self, page: str, what: str, expected: str, found: str) -> None:
        """Record a problem on `page`."""
        self.problems.append(Problem(page, what, expected, found))


class _Anchors(html.parser.HTMLParser):
    """Collects the ids and names a page defines, and its meta-refresh target if any."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors: set[str] = set()
        self.refresh: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.anchors.add(str(values[key]))
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh":
            match = re.search(r"url\s*=\s*(\S+)", values.get("content") or "", re.I)
            self.refresh = match.group(1).strip("'\"") if match else None


@functools.cache
def read_anchors(path: Path) -> _Anchors:
    """The ids, names and redirect of the HTML file `path` (read once)."""
    parser = _Anchors()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: the built folder and where the screenshots go."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", type=Path, default=DEFAULT_HTML,
                        help="the built site (default: site/_build/html)")
    parser.add_argument("--screenshots", type=Path, default=DEFAULT_SHOTS,
                        help="folder for the PNG screenshots (default: site/_build/screenshots)")
    return parser.parse_args(argv)


def find_chromium() -> str | None:
    """The Chromium to drive: $CHROMIUM if set, else the first known name on PATH."""
    if os.environ.get("CHROMIUM"):
        return shutil.which(os.environ["CHROMIUM"])
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging each request to stderr."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """Drop the per-request log line."""


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve `root` on 127.0.0.1 (a free port) in a thread; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def html_pages(root: Path) -> list[str]:
    """Every page of the built site, relative to `root`, in a stable order.

    Folders whose name starts with `_` (`_static`, `_sources`, `_images`) hold the theme's
    template fragments and copies of sources, not pages a reader opens."""
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*.html")
                  if not any(part.startswith("_") for part in path.relative_to(root).parts[:-1]))


def local_target(url: str, base: str, root: Path) -> tuple[Path, str] | None:
    """The file and fragment a URL of the local server points to (None if not local)."""
    if not url.startswith(base):
        return None
    parts = urlsplit(url)
    path = root / unquote(parts.path).lstrip("/")
    if parts.path.endswith("/"):
        path = path / "index.html"
    return path, unquote(parts.fragment)


def expected_drawings(lesson: str) -> int | None:
    """How many Graphviz drawings the stored notebook of `lesson` holds (None: not found)."""
    notebook = REPO / "lessons" / f"{lesson}.ipynb"
    if not notebook.is_file():
        return None
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    count = 0
    for output in (out for cell in cells for out in cell.get("outputs", [])):
        svg = output.get("data", {}).get("image/svg+xml", "")
        count += "graphviz" in ("".join(svg) if isinstance(svg, list) else svg).lower()
    return count


class SiteChecker:
    """Opens the pages of one served site in one browser page and records what is wrong."""

    def __init__(self, browser_page: Any, base: str, root: Path, report: Report) -> None:
        self.page = browser_page
        self.base = base
        self.root = root
        self.report = report
        self.current = "(start)"
        self._listen()

    def _listen(self) -> None:
        """Attribute the browser's errors and failed loads to the page being checked."""
        def on_console(msg: Any) -> None:
            # "Failed to load resource" repeats a request that on_response or
            # on_request_failed reports with its URL, except the browser's own request for
            # /favicon.ico: a site published under a sub-path does not own that address.
            if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
                source = self._name(msg.location.get("url") or "")
                self.report.add(self.current, "console error", "none",
                                msg.text + (f" (from {source})" if source else ""))

        def on_page_error(error: Any) -> None:
            self.report.add(self.current, "uncaught script error", "none", str(error))

        def on_request_failed(request: Any) -> None:
            if not request.url.startswith(self.base):  # blocked: see BROWSER_ARGS
                self.report.add(self.current, f"loads {request.url}",
                                "only files of the site (it must read offline)", "a request out")
            # ERR_ABORTED is the browser dropping a request because we moved on, not a fault.
            elif "ERR_ABORTED" not in (request.failure or ""):
                self.report.add(self.current, f"failed request {self._name(request.url)}",
                                "it loads", request.failure or "failed")

        def on_response(response: Any) -> None:
            if response.status >= 400:
                self.report.add(self.current, f"HTTP error for {self._name(response.url)}",
                                "status < 400", str(response.status))

        self.page.on("console", on_console)
        self.page.on("pageerror", on_page_error)
        self.page.on("requestfailed", on_request_failed)
        self.page.on("response", on_response)

    def _name(self, url: str) -> str:
        """A URL as a path of the site when it is local, else unchanged."""
        return url[len(self.base):] if url.startswith(self.base) else url

    def open(self, rel: str) -> bool:
        """Load page `rel` and wait for its load event; False (and a problem) if it fails."""
        self.current = rel
        try:
            self.page.goto(urljoin(self.base, rel), wait_until="load", timeout=LOAD_TIMEOUT_MS)
        except Exception as error:  # noqa: BLE001 (Playwright raises its own Error and timeouts)
            self.report.add(rel, "page did not load", "load event", str(error).splitlines()[0])
            return False
        return True

    def check_all(self, pages: list[str]) -> None:
        """Check every page in `pages` and every local page their links lead to."""
        queue, seen = list(pages), set(pages)
        while queue:
            rel = queue.pop(0)
            for found in self.check_page(rel):
                if found not in seen:
                    seen.add(found)
                    queue.append(found)
        self.report.pages = sorted(seen)

    def check_page(self, rel: str) -> list[str]:
        """Check one page; return the local HTML pages its links lead to."""
        redirect = read_anchors(self.root / rel).refresh
        if not self.open(rel):
            return []
        if redirect is not None:
            return self.check_redirect(rel, redirect)
        lesson = LESSON_PAGE.match(rel)
        if lesson:
            self.check_drawings(rel, lesson.group(1))
        self.check_images(rel)
        self.check_width(rel, "at 1280 px")
        return self.check_links(rel)

    def check_width(self, rel: str, where: str) -> None:
        """The page fits its window: a reader never scrolls the whole page sideways."""
        self.page.evaluate("() => document.fonts.ready")
        extra = self.page.evaluate(JS_SIDEWAYS)
        if extra > 1:
            self.report.add(rel, f"page width {where}", "no sideways scrolling",
                            f"{extra} px wider than the window")

    def check_phone(self, pages: list[str]) -> None:
        """Every page at a phone's width: it fits, with no sideways scrolling."""
        self.page.set_viewport_size(PHONE)
        for rel in pages:
            if read_anchors(self.root / rel).refresh is None and self.open(rel):
                self.check_width(rel, "at 390 px (a phone)")
        self.page.set_viewport_size(VIEWPORT)

    def check_redirect(self, rel: str, target: str) -> list[str]:
        """A page that only sends the browser on: the browser must arrive at `target`."""
        url = urljoin(urljoin(self.base, rel), target)
        self.current = self._name(url)  # what the browser reports next comes from there
        try:
            self.page.wait_for_url(url, timeout=LOAD_TIMEOUT_MS, wait_until="load")
        except Exception:  # noqa: BLE001 (Playwright's timeout error)
            self.report.add(rel, "redirect", self._name(url), self._name(self.page.url))
        return [self._name(url)] if local_target(url, self.base, self.root) else []

    def check_links(self, rel: str) -> list[str]:
        """Every internal link of the page must reach a file, and its fragment an id there."""
        pages = []
        for written, resolved in self.page.evaluate(JS_LINKS):
            if written.lower().startswith(EXTERNAL):
                continue
            target = local_target(resolved, self.base, self.root)
            if target is None:
                continue
            self.report.links += 1
            path, fragment = target
            if not path.is_file():
                self.report.add(rel, f"broken link {written}", "an existing file",
                                f"no {path.relative_to(self.root).as_posix()}")
                continue
            if path.suffix == ".html":
                pages.append(path.relative_to(self.root).as_posix())
                if fragment and fragment not in read_anchors(path).anchors:
                    self.report.add(rel, f"broken link {written}",
                                    f"id {fragment!r} in {path.name}", "no such id")
        return pages

    def check_images(self, rel: str) -> None:
        """Every image must have loaded; in the main content it must also show with a size.

        Outside the main content (the header and the sidebars) the theme may hide parts of
        the page, e.g. a collapsed sidebar on a narrow window, so a zero size there is not a
        fault; only loading is checked. So too inside the main content for the theme's
        `only-dark`/`only-light` variants (hidden in the other colour mode) and for what sits
        in a closed <details> (a folded solution): hidden by design until the reader asks."""
        for image in self.page.evaluate(JS_IMAGES):
            self.report.images += 1
            if not image["complete"] or image["naturalWidth"] == 0:
                self.report.add(rel, f"image {image['src']}", "loaded", "not loaded")
            elif image["inMain"] and not image["hidden"] and (
                    image["width"] == 0 or image["height"] == 0):
                self.report.add(rel, f"image {image['src']}", "shown with a size",
                                f"{image['width']:.0f}x{image['height']:.0f} px")

    def check_drawings(self, rel: str, lesson: str) -> None:
        """The lesson's graph drawings: as many as its notebook holds, each with a size.

        A drawing in a folded solution (a closed <details>) has no size until it is opened;
        it is counted, not measured."""
        drawings = self.page.evaluate(JS_DRAWINGS)
        expected = expected_drawings(lesson)
        self.report.drawings[lesson] = (len(drawings), expected)
        if expected is None and lesson in LESSONS_WITH_DRAWINGS and not drawings:
            self.report.add(rel, "graph drawings", "at least one", "none")
        elif expected is not None and len(drawings) != expected:
            self.report.add(rel, "graph drawings", f"{expected} (as in the notebook)",
                            str(len(drawings)))
        for drawing in drawings:
            if not drawing["folded"] and (drawing["width"] == 0 or drawing["height"] == 0):
                self.report.add(rel, f"drawing {drawing['src']}", "a non-zero size",
                                f"{drawing['width']:.0f}x{drawing['height']:.0f} px")

    def check_search(self) -> None:
        """Search for a word of a lesson; a result must link to that lesson."""
        usable = [(word, page) for word, page in SEARCHES
                  if (self.root / page).is_file()
                  and word.lower() in (self.root / page).read_text(encoding="utf-8").lower()]
        if not usable:
            self.report.add("search.html", "search", "a known word in its lesson",
                            "none of the words is in its lesson any more")
            return
        word, page = usable[0]
        if not self.open(f"search.html?q={word}"):
            return
        try:
            self.page.wait_for_function(JS_SEARCH_DONE, timeout=SEARCH_TIMEOUT_MS)
        except Exception:  # noqa: BLE001 (Playwright's timeout error)
            self.report.add(self.current, "search", "results within 20 s", "no results list")
            return
        results = [self._name(url).split("#")[0] for url in self.page.evaluate(JS_SEARCH_LINKS)]
        self.report.search = f"{word!r}: {len(results)} result(s), " + (
            f"{page} among them" if page in results else f"{page} missing")
        if page not in results:
            self.report.add(self.current, "search", f"a result linking to {page}",
                            ", ".join(results) or "no results")

    def screenshot(self, rel: str, path: Path) -> None:
        """Save a full-page PNG of page `rel` to `path`."""
        if self.open(rel):
            self.page.evaluate("() => document.fonts.ready")
            self.page.screenshot(path=str(path), full_page=True)
            self.report.screenshots.append(path)


def run_checks(browser: Any, root: Path, shots: Path) -> Report:
    """Serve `root`, check every page, run a search, take the screenshots."""
    report = Report()
    context = browser.new_context(viewport=VIEWPORT)
    # Each page is opened as on a reader's first visit: the theme keeps its colour mode in
    # localStorage, and a stored value would hide errors that only a first visit shows.
    context.add_init_script("localStorage.clear(); sessionStorage.clear();")
    with serve(root) as base:
        checker = SiteChecker(context.new_page(), base, root, report)
        checker.check_all(html_pages(root))
        checker.check_phone(report.pages)
        checker.check_search()
        shots.mkdir(parents=True, exist_ok=True)
        for name, rel in SCREENSHOTS.items():
            checker.screenshot(rel, shots / name)
    context.close()
    return report


def print_summary(report: Report, seconds: float) -> None:
    """The summary, then one line per problem (a problem seen on several pages once)."""
    print(f"browser check: {len(report.pages)} pages opened, {report.links} internal links "
          f"and {report.images} images checked, in {seconds:.1f} s")
    for lesson, (seen, expected) in sorted(report.drawings.items()):
        print(f"  drawings in {lesson}: {seen}"
              + ("" if expected is None else f" (notebook: {expected})"))
    print(f"  search: {report.search}")
    for path in report.screenshots:
        print(f"  screenshot: {path}")
    grouped: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for problem in report.problems:
        pages = grouped[(problem.what, problem.expected, problem.found)]
        if problem.page not in pages:
            pages.append(problem.page)
    print(f"{len(grouped)} problem(s)" + (":" if grouped else "."))
    for (what, expected, found), pages in grouped.items():
        where = ", ".join(pages[:3]) + (f" (+{len(pages) - 3} more)" if len(pages) > 3 else "")
        print(f"  {where}: {what}: expected {expected}, found {found}")


def load_playwright() -> Callable[[], Any] | None:
    """Playwright's `sync_playwright`, or None when it is not installed."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    return sync_playwright


def main(argv: list[str] | None = None) -> int:
    """Run the check; return the exit status (0 clean, 1 problems, 3 cannot run)."""
    args = parse_args(argv)
    root = args.html.resolve()
    if not (root / "index.html").is_file() and not html_pages(root):
        print(f"browser check: no built site in {root} (run `make site` first)", file=sys.stderr)
        return EXIT_PROBLEMS
    sync_playwright, chromium = load_playwright(), find_chromium()
    if sync_playwright is None or chromium is None:
        missing = ("Playwright is not installed (`make site` installs it)"
                   if sync_playwright is None else
                   "no Chromium found (`apt-get install chromium`, or set CHROMIUM to one)")
        print(f"browser check skipped: {missing}", file=sys.stderr)
        return EXIT_SKIPPED
    start = time.perf_counter()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            report = run_checks(browser, root, args.screenshots)
        finally:
            browser.close()
    print_summary(report, time.perf_counter() - start)
    return EXIT_PROBLEMS if report.problems else EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())
