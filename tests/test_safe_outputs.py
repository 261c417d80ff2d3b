"""safe_outputs on notebooks in memory: what a student's outputs and markdown become before
feedback and formgrader render them, and the feedback page's Content-Security-Policy.

tests/test_feedback_browser.py opens the pages in a real browser.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader", reason="the instructor extra (make test installs it)")

from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath  # noqa: E402
from nbformat.v4 import (  # noqa: E402
    new_code_cell,
    new_markdown_cell,
    new_notebook,
    new_output,
    new_raw_cell,
)
from nbgrader.converters import GenerateFeedback  # noqa: E402
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata  # noqa: E402
from traitlets.config import Config  # noqa: E402

from minigrad.course.grading.safe_outputs import (  # noqa: E402
    CSP_META,
    SHOWN_CHARACTERS,
    CspHtmlExporter,
    NeutraliseStudentHtml,
    protect,
    renders_safely,
    safe_markdown,
    with_content_security_policy,
)

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def _neutralised(*cells: nbformat.NotebookNode, **metadata: object) -> nbformat.NotebookNode:
    notebook = new_notebook(cells=list(cells), metadata=metadata)
    notebook, _ = NeutraliseStudentHtml().preprocess(notebook, {})
    return notebook


def _output_data(data: dict, metadata: dict | None = None) -> tuple[dict, dict]:
    cell = new_code_cell("display(...)", outputs=[
        new_output("display_data", data=data, metadata=metadata or {})])
    output = _neutralised(cell).cells[0].outputs[0]
    return dict(output.data), dict(output.metadata)


@pytest.mark.parametrize("mime, label", [
    ("text/html", "HTML"), ("image/svg+xml", "SVG"), ("application/javascript", "JavaScript"),
    ("text/markdown", "Markdown"), ("text/latex", "LaTeX"), ("application/pdf", "application/pdf"),
])
def test_a_rich_output_alone_is_shown_as_its_text(mime: str, label: str) -> None:
    data, _ = _output_data({mime: "<script>alert(1)</script>"})
    assert data == {"text/plain": f"[{label} output shown as text: <script>alert(1)</script>]"}


def test_a_rich_output_with_text_keeps_the_text_only() -> None:
    data, _ = _output_data({"text/html": "<b>x</b>", "text/plain": "x"})
    assert data == {"text/plain": "x"}


def test_a_graphviz_drawing_keeps_its_png() -> None:
    data, _ = _output_data({"image/svg+xml": "<svg/>", "image/png": PNG,
                            "text/plain": "<graphviz.graphs.Digraph>"})
    assert data == {"image/png": PNG, "text/plain": "<graphviz.graphs.Digraph>"}


def test_a_widget_shows_its_json_or_its_text() -> None:
    view = {"model_id": "1", "version_major": 2, "version_minor": 0}
    data, _ = _output_data({"application/vnd.jupyter.widget-view+json": view})
    assert data["text/plain"].startswith("[application/vnd.jupyter.widget-view+json output "
                                         'shown as text: {\n "model_id": "1"')
    data, _ = _output_data({"application/vnd.jupyter.widget-view+json": view,
                            "text/plain": "IntSlider(value=0)"})
    assert data == {"text/plain": "IntSlider(value=0)"}


def test_a_long_output_is_cut() -> None:
    data, _ = _output_data({"text/html": "x" * (SHOWN_CHARACTERS + 500)})
    assert data["text/plain"].endswith("x ... (500 more characters)]")
    assert len(data["text/plain"]) < SHOWN_CHARACTERS + 100


def test_an_image_that_is_not_base64_is_dropped() -> None:
    data, _ = _output_data({"image/png": '"><script>'})
    assert data == {"text/plain": '[image/png output shown as text: "><script>]'}
    data, _ = _output_data({"image/jpeg": ["not", "text"], "text/plain": "a picture"})
    assert data == {"text/plain": "a picture"}


def test_image_metadata_keeps_sizes_not_attributes() -> None:
    """nbconvert writes width= unquoted into the <img> tag."""
    _, metadata = _output_data(
        {"image/png": PNG, "image/jpeg": PNG},
        {"image/png": {"width": "1 onerror=alert(1)", "height": 20, "alt": "a graph"},
         "image/jpeg": {"width": True, "unconfined": True},
         "filenames": {"image/png": "evil.html"}, "width": "1 onerror=alert(1)"},
    )
    assert metadata == {"image/png": {"height": 20, "alt": "a graph"},
                        "image/jpeg": {"unconfined": True}}


def test_streams_and_errors_are_kept() -> None:
    outputs = [new_output("stream", name="stdout", text="<b>printed</b>"),
               new_output("error", ename="E", evalue="<i>", traceback=["\x1b[31mE: <i>\x1b[0m"])]
    cell = _neutralised(new_code_cell("x", outputs=copy.deepcopy(outputs))).cells[0]
    assert cell.outputs == outputs


def test_notebook_metadata_keeps_what_grading_reads() -> None:
    kept = {"kernelspec": {"name": "python3", "display_name": "Python 3"},
            "language_info": {"name": "python"}, "nbgrader": {"__altered__": False}}
    widgets = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    notebook = _neutralised(new_code_cell("1"), widgets=widgets, title="<script>", **kept)
    assert notebook.metadata == kept


def test_attachments_keep_pasted_pictures_only() -> None:
    cell = new_markdown_cell("![a](attachment:a.png) ![b](attachment:b.svg)", attachments={
        "a.png": {"image/png": PNG, "image/svg+xml": "<svg onload='alert(1)'/>"},
        "b.svg": {"image/svg+xml": "<svg onload='alert(1)'/>"},
    })
    cell = _neutralised(cell).cells[0]
    assert cell.attachments == {"a.png": {"image/png": PNG}}
    # The dropped attachment's reference would make nbconvert fail on the cell.
    assert cell.source == "![a](attachment:a.png) ![b](unsafe:attachment:b.svg)"
    assert renders_safely(cell.source, cell.attachments)


def test_a_raw_cell_is_escaped() -> None:
    cell = _neutralised(new_raw_cell("<script>alert(1)</script> & co")).cells[0]
    assert cell.source == "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"


HOSTILE_MARKDOWN = [
    ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
    ('<img src=x onerror="alert(1)">', '&lt;img src=x onerror="alert(1)">'),
    ('<iframe src="javascript:alert(1)"></iframe>',
     '&lt;iframe src="javascript:alert(1)">&lt;/iframe>'),
    ("> <div onclick='x'>\n> q\n> </div>", "> &lt;div onclick='x'>\n> q\n> &lt;/div>"),
    ("<!-- hidden --> <javascript:alert(2)>", "&lt;!-- hidden --> &lt;javascript:alert(2)>"),
    ("[a](javascript:alert('x'))", "[a](unsafe:javascript:alert('x'))"),
    ("[a](JaVaScRiPt:alert(1))", "[a](unsafe:JaVaScRiPt:alert(1))"),
    ("[a]( javascript:alert(1))", "[a]( unsafe:javascript:alert(1))"),
    ("[a](data:text/html,<b>)", "[a](unsafe:data:text/html,<b>)"),
    ("![a](data:image/svg+xml,x)", "![a](unsafe:data:image/svg+xml,x)"),
    ("[a][r]\n\n[r]: vbscript:msgbox", "[a][r]\n\n[r]: unsafe:vbscript:msgbox"),
    ("[a](files/javascript:alert(1))", "[a](unsafe:files/javascript:alert(1))"),
    # A submitted page, which formgrader serves from the instructor's Jupyter server.
    ("[my plot](plot.html) [b](x.SVG#top) [c](evil%2Ehtml?q=1)",
     "[my plot](unsafe:plot.html) [b](unsafe:x.SVG#top) [c](unsafe:evil%2Ehtml?q=1)"),
    ("```mermaid\n<img src=x onerror=alert(1)>\n```", "```text\n<img src=x onerror=alert(1)>\n```"),
]


@pytest.mark.parametrize("source, expected", HOSTILE_MARKDOWN)
def test_raw_html_shows_as_text_and_links_cannot_run(source: str, expected: str) -> None:
    assert not renders_safely(source)
    cell = _neutralised(new_markdown_cell(source)).cells[0]
    assert cell.source == expected
    assert renders_safely(cell.source)
    page = MarkdownWithMath(renderer=IPythonRenderer(escape=False)).render(cell.source)
    assert set(re.findall(r"<([a-z]+)", page)) <= {"p", "a", "img", "blockquote", "div", "pre",
                                                  "span"}
    assert not re.search(r"<[^>]*\son\w+=|href=\"javascript", page), page


@pytest.mark.parametrize("source", [
    "`<AddBackward>` node, `\"feedback to <role>\"`, and x < y but a<b",
    "$a<b$ and $$x<y$$ and \\\\(a<b\\\\)",
    "| a | b |\n|:--|--:|\n| 1 | 2 |\n\n- [ ] task\n- [x] done",
    "# Heading\n\n```python\nif x < 1:\n    pass\n```\n\n    indented <b>code</b>",
    "[the docs](https://example.org/a?b=1#c), [a lesson](02_backward.ipynb), "
    "[top](#Heading), <https://example.org>, [mail](mailto:a@b.c)",
])
def test_ordinary_markdown_is_unchanged(source: str) -> None:
    assert safe_markdown(source) == source


def test_every_lesson_renders_as_before() -> None:
    """The lessons' own markdown is in every feedback file; none of it may change."""
    changed = []
    for path in sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")):
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "markdown":
                if safe_markdown(cell.source, cell.get("attachments")) != cell.source:
                    changed.append(f"{path.name}, cell {index}")
    assert not changed


@pytest.mark.parametrize("source", [
    "[a](jav&#97;script:alert(1))",  # an entity the parser decodes
    "[a](&#x6A;avascript:alert(1)) ```` and `",
])
def test_what_cannot_be_fixed_in_place_is_shown_as_source(source: str) -> None:
    shown = safe_markdown(source)
    assert shown.startswith("*(Shown as its source: this cell held markup")
    assert source in shown and renders_safely(shown)
    page = MarkdownWithMath(renderer=IPythonRenderer(escape=False)).render(shown)
    assert "<a " not in page and "<code>" in page


def _feedback_page(notebook: nbformat.NotebookNode) -> str:
    exporter = CspHtmlExporter(config=GenerateFeedback().config)
    exporter.register_preprocessor(NeutraliseStudentHtml(), enabled=True)
    grades = {"notebook": "n", "score": 0.0, "max_score": 1.0, "late_penalty": 0}
    page, _ = exporter.from_notebook_node(notebook, resources={"nbgrader": grades})
    return page


def test_the_feedback_page_starts_with_the_policy() -> None:
    hostile = new_code_cell("x", outputs=[new_output(
        "display_data", data={"text/html": "<script>alert(1)</script>"})])
    page = _feedback_page(new_notebook(cells=[new_markdown_cell("<script>x</script>"), hostile]))
    head = page[:page.index("</head>")]
    assert re.search(r"<head>\s*" + re.escape(CSP_META), head)
    assert "script-src" not in CSP_META and "default-src 'none'" in CSP_META
    assert "<script>alert(1)</script>" not in page and "<script>x</script>" not in page
    assert "[HTML output shown as text: &lt;script&gt;alert(1)&lt;/script&gt;]" in page


def test_a_page_without_a_head_is_refused() -> None:
    with pytest.raises(ValueError, match=r"expected an HTML page with a <head> tag.*got one "
                                         r"starting '<p>hi</p>'.*template_name must keep"):
        with_content_security_policy("<p>hi</p>")
    assert with_content_security_policy("<html><head lang=en><title>t</title>").startswith(
        f"<html><head lang=en>\n{CSP_META}<title>")


def test_protect_grades_first_and_neutralises_before_the_metadata_check() -> None:
    config = protect(protect(Config()))
    autograde = config.Autograde.autograde_preprocessors
    assert autograde.count(NeutraliseStudentHtml) == 1
    assert autograde[autograde.index(AssignLatePenalties) + 1] is NeutraliseStudentHtml
    assert autograde[-1] is CheckCellMetadata
    feedback = config.GenerateFeedback.preprocessors
    assert feedback[0] is NeutraliseStudentHtml and feedback.count(NeutraliseStudentHtml) == 1
    assert config.GenerateFeedback.exporter_class is CspHtmlExporter


def test_the_course_config_protects_feedback_and_formgrader() -> None:
    from minigrad.course.grading.config import configure

    config = configure(Config())
    assert NeutraliseStudentHtml in config.Autograde.autograde_preprocessors
    assert config.GenerateFeedback.preprocessors[0] is NeutraliseStudentHtml
    assert config.GenerateFeedback.exporter_class is CspHtmlExporter
