"""The course website (`make site`, issue 37): Sphinx with MyST-NB renders every stored
lesson, without executing it and without a network, and the pages in site/. Built here, with
warnings as errors, when the `site` extra is installed (`make site` and `make test` install
it); skipped, saying so, otherwise. The browser test of the built site is
site/browser_check.py (`make site-test`).

What keeps the site true: a lesson or a README section added without a page, a page left out
of the home page's contents, or a link to a file that is not there fails here."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from minigrad.course.exercise_cells import exercise_cells

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
PAGES = sorted(SITE.glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)|<img[^>]+src=\"([^\"]+)\"")
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)

sys.path.insert(0, str(SITE))
import lesson_pages  # noqa: E402 (site/ is not a package; its conf.py does the same)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("myst_nb", reason="the site extra is not installed: run `make site`")
    pytest.importorskip("sphinx_book_theme", reason="the site extra is not installed")
    out = tmp_path_factory.mktemp("site") / "html"
    doctrees = out.parent / "doctrees"
    command = [sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html",
               "-d", str(doctrees), "-c", str(SITE), str(ROOT), str(out)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, f"the site does not build without warnings:\n{run.stderr}"
    return out


def exercises_of(lesson: Path) -> list[str]:
    notebook = nbformat.read(lesson, as_version=4)
    roles = exercise_cells(notebook, lesson.stem)
    return [role.exercise for _, role in roles if role.kind == "exercise"]


def test_every_lesson_has_a_page_with_its_outputs(built: Path) -> None:
    for lesson in LESSONS:
        page = built / "lessons" / f"{lesson.stem}.html"
        assert page.exists(), f"no page for {lesson.name}"
        assert "cell_output" in page.read_text(), f"{page.name} shows no stored output"


def test_exercises_are_marked_with_the_student_notebook_and_solutions_folded(built: Path) -> None:
    for lesson in LESSONS:
        html = (built / "lessons" / f"{lesson.stem}.html").read_text()
        for exercise in exercises_of(lesson):
            assert f"Exercise {exercise}: yours to write" in html, f"{lesson.name}: {exercise}"
        boxes = html.count('class="exercise admonition"')
        assert boxes == len(exercises_of(lesson)), f"{lesson.name}: {boxes} exercise boxes"
        assert html.count("Show a solution") >= boxes
        student = re.findall(r'href="(\.\./_downloads/[^"]+/' + lesson.name + ')"', html)
        assert student, f"{lesson.name}: no link to the student notebook"
        downloaded = (built / "lessons" / student[0]).resolve()
        assert "NotImplementedError" in downloaded.read_text(), "not the student version"
        # The page shows what the student notebook shows: no hidden tests.
        assert "BEGIN HIDDEN TESTS" not in html and "hidden_tests(" not in html, lesson.name
        assert "BEGIN SOLUTION" not in html, f"{lesson.name}: a solution marker shows"
        assert "# NBVAL_" not in html, f"{lesson.name}: an nbval marker shows in code"


def test_what_a_solution_prints_is_folded_with_it(built: Path) -> None:
    """A prediction's answer is in what its cell prints: on the page the whole solution cell,
    outputs included, sits inside the fold (lesson 06's Exercise 6.5 prints its three
    numbers; later cells of a lesson may reveal them again, on purpose)."""
    for lesson in LESSONS:
        html = (built / "lessons" / f"{lesson.stem}.html").read_text()
        folded = re.findall(r'<div class="cell tag_hide-cell[^"]*">\s*<details', html)
        assert len(folded) == len(exercises_of(lesson)), f"{lesson.name}: {len(folded)} folded"
    html = (built / "lessons" / "06_grad_factor.html").read_text()
    unfolded = re.sub(r"<details.*?</details>", "", html, flags=re.DOTALL)
    assert "(2.25, 49.5, 16.5)" in html and "(2.25, 49.5, 16.5)" not in unfolded


def test_no_page_offers_the_complete_lesson_for_download(built: Path) -> None:
    """A lesson's source holds its hidden tests: the site copies no sources (a lesson page
    links the student notebook instead)."""
    assert not list(built.glob("_sources/**/*.ipynb"))
    for download in built.glob("_downloads/*/*.ipynb"):
        assert "BEGIN HIDDEN TESTS" not in download.read_text(), download.name


def test_a_new_address_makes_sphinx_read_the_lessons_again() -> None:
    """The links are written when a page is read: the settings must be "env" settings, or a
    second `make site` with another address would keep the first one's links."""
    registered = []
    app = SimpleNamespace(add_config_value=lambda *args: registered.append(args),
                          connect=lambda *args: None)
    lesson_pages.setup(app)
    assert registered and all(rebuild == "env" for _, _, rebuild, _ in registered)


def test_written_answers_are_folded(built: Path) -> None:
    html = (built / "lessons" / "03_custom_functions.html").read_text()
    assert '<details class="model-answer"><summary>Show a model answer</summary>' in html


def test_the_home_page_lists_the_lessons_as_the_readme_does() -> None:
    """The home page's lesson table is the README's, links made relative to site/."""
    readme = [line for line in (ROOT / "README.md").read_text().splitlines()
              if line.startswith("| [") and "](lessons/" in line]
    home = [line for line in (SITE / "index.md").read_text().splitlines()
            if line.startswith("| [") and "](../lessons/" in line]
    assert len(readme) == len(LESSONS)
    assert home == [line.replace("](lessons/", "](../lessons/") for line in readme]


def test_the_home_page_links_every_lesson_and_page(built: Path) -> None:
    home = (built / "site" / "index.html").read_text()
    for lesson in LESSONS:
        assert f"../lessons/{lesson.stem}.html" in home, f"the home page misses {lesson.name}"
    for page in PAGES:
        if page.stem != "index":
            assert f'href="{page.stem}.html"' in home, f"the home page misses {page.name}"
    top = (built / "index.html").read_text()
    assert 'url=site/index.html' in top, "index.html at the top does not lead to the home page"


def test_images_exist_and_math_is_served_locally(built: Path) -> None:
    for page in [*(built / "lessons").glob("*.html"), *(built / "site").glob("*.html")]:
        html = page.read_text()
        for source in re.findall(r'<img[^>]+src="([^"]+)"', html):
            if not source.startswith("data:"):
                assert (page.parent / source).resolve().exists(), f"{page.name}: no {source}"
        for script in re.findall(r'<script[^>]+src="([^"]+)"', html):
            assert not script.startswith(("http:", "https:", "//")), f"{page.name}: {script}"
    assert (built / "_static" / "mathjax" / "tex-chtml.js").exists()
    assert not (built / ".doctrees").exists(), "build caches would be published with the site"


def test_the_api_reference_is_generated_from_the_docstrings(built: Path) -> None:
    html = (built / "site" / "api.html").read_text()
    for name in ["minigrad.Variable", "minigrad.Function", "FunctionCtx", "minigrad.nn.Module",
                 "minigrad.optim.SGD", "minigrad.compile", "minigrad.viz.draw", "CheckError"]:
        assert f'id="{name}' in html or f'id="minigrad.{name}' in html or name in html, name
    import minigrad

    first_line = minigrad.Function.__doc__.splitlines()[0]
    assert first_line.split(";")[0] in html, "Function's docstring is not on the page"


def test_every_name_the_api_page_asks_for_is_on_it(built: Path) -> None:
    """autodoc skips a listed member it cannot document without a word: each name in a
    `:members:` list of site/api.md must have its entry on the page."""
    html = (built / "site" / "api.html").read_text()
    source = (SITE / "api.md").read_text()
    directive = re.compile(r"^\.\. auto(?:class|module):: (\S+)\n((?:   :.*\n)+)", re.MULTILINE)
    asked = 0
    for target, options in directive.findall(source):
        listed = re.search(r":members: (.+)", options)
        for member in (listed.group(1).split(", ") if listed else []):
            asked += 1
            assert f'id="{target}.{member}"' in html, f"api.md asks for {target}.{member}"
    assert asked > 50


# What keeps the site true, checked on the sources (no build needed).


def test_every_readme_section_has_a_page() -> None:
    """Each `## ` section of the README is also a heading of the home page or of a page, so
    the site holds everything the front door promises."""
    on_pages = {title.strip() for page in PAGES for _, title in HEADING.findall(page.read_text())}
    readme = (ROOT / "README.md").read_text()
    for title in re.findall(r"^## (.+)$", readme, re.MULTILINE):
        assert title.strip() in on_pages, (
            f"the README's section {title!r} has no page: add a heading {title!r} to a page "
            f"in site/ (or to site/index.md)"
        )


def test_every_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in PAGES:
        if page.stem != "index":
            assert f"(site/{page.name})" in readme, f"the README does not link {page.name}"


@pytest.mark.parametrize("source", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_relative_links_point_to_files_that_exist(source: Path) -> None:
    text = re.sub(r"```.*?```", "", source.read_text(), flags=re.DOTALL)
    for link, image in LINK.findall(text):
        target = (link or image).split("#")[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        assert (source.parent / target).exists(), f"{source.name} links to a missing {target}"


def fake_app(**settings: str) -> SimpleNamespace:
    config = {"lesson_lab_url": "", "lesson_hub_url": "", "lesson_repo_url": "",
              "lesson_repo_branch": "main", **settings}
    return SimpleNamespace(config=SimpleNamespace(**config))


def test_no_open_link_when_no_address_is_set() -> None:
    lesson = nbformat.read(LESSONS[3], as_version=4)
    page = lesson_pages.web_version(fake_app(), lesson, LESSONS[3].stem)
    text = json.dumps(nbformat.from_dict(page))
    assert "open it in JupyterLab" not in text and "git-pull" not in text


def test_a_hub_address_gives_nbgitpuller_links() -> None:
    app = fake_app(lesson_hub_url="https://hub.example.edu/",
                   lesson_repo_url="https://github.com/someone/minigrad.git")
    url = lesson_pages.open_url(app, "lessons/exercises/03_custom_functions.ipynb")
    assert url == (
        "https://hub.example.edu/hub/user-redirect/git-pull"
        "?repo=https%3A%2F%2Fgithub.com%2Fsomeone%2Fminigrad.git"
        "&urlpath=lab%2Ftree%2Fminigrad%2Flessons%2Fexercises%2F03_custom_functions.ipynb"
        "&branch=main"
    )
    lesson = nbformat.read(LESSONS[3], as_version=4)
    page = lesson_pages.web_version(app, lesson, LESSONS[3].stem)
    boxes = [cell.source for cell in page.cells if "yours to write" in cell.source]
    assert boxes and all(f"[open it in JupyterLab]({url})" in box for box in boxes)


def test_a_lab_template_is_filled_with_the_path() -> None:
    app = fake_app(lesson_lab_url="http://localhost:8888/lab/tree/{path}")
    url = lesson_pages.open_url(app, "lessons/exercises/00_welcome.ipynb")
    assert url == "http://localhost:8888/lab/tree/lessons/exercises/00_welcome.ipynb"


def test_the_page_version_keeps_every_cell_of_the_lesson() -> None:
    """Nothing of a lesson is lost on its page: every cell is there, exercise cells twice
    (as the student sees them, then folded with their outputs)."""
    for lesson in LESSONS:
        notebook = nbformat.read(lesson, as_version=4)
        page = lesson_pages.web_version(fake_app(), notebook, lesson.stem)
        exercises = len(exercises_of(lesson))
        assert len(page.cells) == len(notebook.cells) + 1 + 2 * exercises, lesson.name
        nbformat.validate(page)


@pytest.mark.parametrize(("settings", "says"), [
    ({"lesson_hub_url": "https://hub.example.edu"}, "without REPO_URL"),
    ({"lesson_lab_url": "http://localhost:8888/lab"}, "has no {path}"),
    ({"lesson_lab_url": "http://h/{path}", "lesson_hub_url": "https://hub", "lesson_repo_url": "r"},
     "both LAB_URL and HUB_URL"),
])
def test_settings_that_cannot_work_stop_the_build(
    settings: dict, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    monkeypatch.setattr(lesson_pages.logger, "warning", said.append)
    lesson_pages.check_addresses(fake_app(**settings))
    assert len(said) == 1 and says in said[0]


def test_sensible_settings_say_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(lesson_pages.logger, "warning", said.append)
    for settings in [{}, {"lesson_lab_url": "http://h/{path}"},
                     {"lesson_hub_url": "https://hub", "lesson_repo_url": "https://r"}]:
        lesson_pages.check_addresses(fake_app(**settings))
    assert said == []
