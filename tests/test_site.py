"""The course website (`make site`, issue 37, first cut): Sphinx with MyST-NB renders every
stored lesson, without executing it and without a network, into a page with its outputs
and drawings. Built here when the `site` extra is installed (`make site` installs it);
skipped, saying so, otherwise."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("myst_nb", reason="the site extra is not installed: run `make site`")
    pytest.importorskip("sphinx_book_theme", reason="the site extra is not installed")
    source = tmp_path_factory.mktemp("site") / "site"
    shutil.copytree(ROOT / "site", source, ignore=shutil.ignore_patterns("_build", "lessons"))
    (source / "lessons").mkdir()
    for lesson in LESSONS:
        shutil.copy(lesson, source / "lessons" / lesson.name)
    out = source / "_build" / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(source), str(out)],
                   check=True, timeout=600)
    return out


def test_every_lesson_has_a_page_with_its_outputs(built: Path) -> None:
    for lesson in LESSONS:
        page = built / "lessons" / f"{lesson.stem}.html"
        assert page.exists(), f"no page for {lesson.name}"
        html = page.read_text()
        assert "cell_output" in html, f"{page.name} shows no stored output"


def test_the_home_page_links_every_lesson_and_images_exist(built: Path) -> None:
    home = (built / "index.html").read_text()
    for lesson in LESSONS:
        assert f"lessons/{lesson.stem}.html" in home, f"the home page misses {lesson.name}"
    for page in (built / "lessons").glob("*.html"):
        for source in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text()):
            if source.startswith("data:"):
                continue
            assert (page.parent / source).resolve().exists(), f"{page.name}: missing {source}"
