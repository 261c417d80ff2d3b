"""A submission made safe to open: what a student's notebook shows cannot run in a browser.

Feedback (nbgrader generate_feedback, nbconvert's HTML) and formgrader (which renders the
autograded notebooks inside the instructor's own Jupyter server, where a script could take
the instructor's token) would both show a student's HTML, JavaScript, SVG and markdown as
live markup. Here:

- NeutraliseStudentHtml (a preprocessor, run by autograde after grading and again first in
  generate_feedback): outputs keep text, streams, errors and PNG/JPEG images; any other kind
  (HTML, SVG, JavaScript, markdown, LaTeX, widgets) is shown as text. Markdown keeps its
  formatting, but raw HTML shows as text and links cannot run script or open a submitted
  HTML file; a cell whose rendering still holds anything else is shown as its source.
- CspHtmlExporter (the feedback's exporter): every page carries a Content-Security-Policy
  that lets no script run at all, should anything slip through.
- protect(c) puts both in place in an nbgrader config.
"""

from __future__ import annotations

import html
import json
import mimetypes
import re
from collections.abc import Mapping
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote

from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.strings import strip_files_prefix
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import default
from traitlets.config import Config

IMAGE_MIME_TYPES = ("image/png", "image/jpeg")
KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info", "nbgrader")
SHOWN_CHARACTERS = 3_000  # of an output shown as text: enough to see what it was
# No script, frame, form, font or image from anywhere but the page itself (data: URLs).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
    "base-uri 'none'; form-action 'none'"
)
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'

_LABELS = {
    "text/html": "HTML",
    "image/svg+xml": "SVG",
    "application/javascript": "JavaScript",
    "text/markdown": "Markdown",
    "text/latex": "LaTeX",
}
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_SOURCE_NOTE = (
    "*(Shown as its source: this cell held markup that could run in the reader's browser.)*"
)


class NeutraliseStudentHtml(NbGraderPreprocessor):
    """Make every cell of a notebook safe to render as HTML (see the module's docstring)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple:
        # Widget state and the like are rendered as <script> blocks by nbconvert.
        kept = {key: nb.metadata[key] for key in KEPT_NOTEBOOK_METADATA if key in nb.metadata}
        nb.metadata = NotebookNode(kept)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple:
        if "attachments" in cell:
            cell.attachments = _image_attachments(cell.attachments)
            if not cell.attachments:
                del cell["attachments"]
        if cell.cell_type == "code":
            cell.outputs = [safe for output in cell.outputs if (safe := safe_output(output))]
        elif cell.cell_type == "markdown":
            cell.source = safe_markdown(cell.source, cell.get("attachments", {}))
        elif cell.cell_type == "raw":
            # A raw cell goes into the HTML as it is (through nbconvert's bleach filter).
            cell.source = html.escape(cell.source, quote=False)
        return cell, resources


def safe_output(output: NotebookNode) -> NotebookNode | None:
    """`output` with only text and PNG/JPEG images (anything else shown as text), or None
    for an output type notebooks do not have."""
    if output.output_type in ("stream", "error"):
        return output  # text, escaped when rendered (tracebacks' ANSI colours included)
    if output.output_type not in ("display_data", "execute_result"):
        return None
    data = output.get("data", {})
    kept = {mime: data[mime] for mime in IMAGE_MIME_TYPES if _is_base64(data.get(mime))}
    text = data.get("text/plain")
    if isinstance(text, str):
        kept["text/plain"] = text
    elif not kept:
        kept["text/plain"] = _as_text(data)
    output.data = NotebookNode(kept)
    output.metadata = _image_metadata(output.get("metadata", {}))
    return output


def _is_base64(value: object) -> bool:
    return isinstance(value, str) and _BASE64.fullmatch(value) is not None


def _as_text(data: Mapping) -> str:
    """The first output kind nbconvert would show, as text for a reader to see."""
    shown = [mime for mime in _LABELS if mime in data] + sorted(set(data) - set(_LABELS))
    if not shown:
        return "[an output with nothing to show]"
    mime = shown[0]
    value = data[mime]
    source = value if isinstance(value, str) else json.dumps(value, indent=1)
    cut = ""
    if len(source) > SHOWN_CHARACTERS:
        cut = f" ... ({len(source) - SHOWN_CHARACTERS:,} more characters)"
        source = source[:SHOWN_CHARACTERS]
    return f"[{_LABELS.get(mime, mime)} output shown as text: {source}{cut}]"


def _image_metadata(metadata: Mapping) -> NotebookNode:
    """Only the image sizes, flags and alt texts nbconvert reads: it writes width and height
    into the <img> tag unquoted, so "1 onerror=..." would add an attribute."""
    kept = {}
    for mime in IMAGE_MIME_TYPES:
        given = metadata.get(mime)
        if not isinstance(given, Mapping):
            continue
        sizes = {key: given[key] for key in ("width", "height") if _is_size(given.get(key))}
        flags = {key: given[key] for key in ("unconfined",) if isinstance(given.get(key), bool)}
        alt = {key: given[key] for key in ("alt",) if isinstance(given.get(key), str)}
        if sizes or flags or alt:
            kept[mime] = {**sizes, **flags, **alt}
    return NotebookNode(kept)


def _is_size(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e5


def _image_attachments(attachments: object) -> dict:
    """A cell's pasted images, PNG and JPEG only (a screenshot of a written answer stays)."""
    if not isinstance(attachments, Mapping):
        return {}
    kept = {}
    for name, bundle in attachments.items():
        if not isinstance(bundle, Mapping):
            continue
        images = {mime: bundle[mime] for mime in IMAGE_MIME_TYPES if _is_base64(bundle.get(mime))}
        if images:
            kept[name] = images
    return kept


# Markdown. First, for a readable result, the raw HTML the renderer would pass through is
# escaped where it is written and unsafe link targets are prefixed with "unsafe:"; then the
# cell is rendered as nbconvert's templates render it and every tag and URL checked.

_MAX_PASSES = 20  # each pass removes at least one "<" or prefixes a URL
_TAG_START = re.compile(r"<[!?/]?[A-Za-z0-9:_-]*")
_MERMAID_FENCE = re.compile(r"(?m)^([ \t>*+\-.\d]*(?:`{3,}|~{3,})[ \t]*)mermaid")
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_SAFE_SCHEMES = ("http", "https", "mailto", "unsafe")
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg);base64,[A-Za-z0-9+/=]*")
_ALLOWED_TAGS = frozenset(
    "a p em strong del code pre span div ul ol li dl dt dd blockquote hr br img input "
    "table thead tbody tr th td h1 h2 h3 h4 h5 h6 sup sub".split()
)
_ALLOWED_ATTRIBUTES = frozenset(
    "href src alt title class id start type checked disabled style".split()
)
_ALIGN = re.compile(r"\s*text-align\s*:\s*(?:left|right|center)\s*;?\s*")


def safe_markdown(source: str, attachments: Mapping | None = None) -> str:
    """Markdown that renders (in nbconvert, as feedback and formgrader render it) with no raw
    HTML and no link that runs script; `attachments` are the cell's kept attachments.
    Source whose rendering still fails the check comes back as a code block of itself."""
    attachments = attachments or {}
    text = source
    for _ in range(_MAX_PASSES):
        fixed = text
        for kind, raw in _unsafe_parts(text, attachments):
            if kind == "html":
                for start in set(_TAG_START.findall(raw)):
                    fixed = fixed.replace(start, "&lt;" + start[1:])
            elif kind == "url":
                fixed = _without_target(fixed, raw)
            else:
                fixed = _MERMAID_FENCE.sub(r"\1text", fixed)  # mermaid code is not escaped
        if fixed == text:
            break
        text = fixed
    if renders_safely(text, attachments):
        return text
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", source)), default=0))
    shown = f"{_SOURCE_NOTE}\n\n{fence}\n{source}\n{fence}\n"
    return shown if renders_safely(shown, attachments) else _SOURCE_NOTE


def _unsafe_parts(text: str, attachments: Mapping) -> set[tuple[str, str]]:
    """("html", raw), ("url", url) and ("mermaid", "") for each part of `text` that the
    renderer would pass through as markup or as an unsafe link target."""
    found: set[tuple[str, str]] = set()
    tokens = MarkdownWithMath(renderer=None)(text)  # the parse nbconvert renders from
    while tokens:
        token = tokens.pop()
        kind = token.get("type")
        attrs = token.get("attrs") or {}
        if kind in ("inline_html", "block_html"):
            found.add(("html", token.get("raw", "")))
        elif kind in ("link", "image"):
            url = attrs.get("url", "")
            if not _url_is_safe(url, kind == "image", attachments):
                found.add(("url", url))
        elif kind == "block_code" and str(attrs.get("info") or "").startswith("mermaid"):
            found.add(("mermaid", ""))
        tokens.extend(token.get("children") or [])
    return found


def _without_target(text: str, url: str) -> str:
    """`text` with link target `url` (as the parser read it: percent-encoded) prefixed with
    "unsafe:" where it is written, or else every "scheme:" of its scheme."""
    for written in (url, unquote(url)):
        if written and written in text:
            return text.replace(written, "unsafe:" + written)
    scheme = _SCHEME.match(_as_browsers_read(url).lower())
    if scheme is None:
        return text
    return re.sub(re.escape(scheme.group(0)), lambda m: "unsafe:" + m.group(0), text, flags=re.I)


def _as_browsers_read(url: str) -> str:
    """`url` as a browser follows it from nbconvert's page: spaces and control characters at
    the ends and tabs and newlines anywhere dropped, and the "files/" prefix the templates
    remove removed."""
    form = re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(33))))
    return re.sub(r"^/?files/", "", form)


def _url_is_safe(url: str, image: bool, attachments: Mapping) -> bool:
    """Whether a link (or, with `image`, an image) to `url` is harmless to follow."""
    form = _as_browsers_read(url)
    scheme = _SCHEME.match(form.lower())
    if scheme is None:  # a relative link: to a file of the submission, in formgrader
        path = unquote(re.split(r"[?#]", form, maxsplit=1)[0]).rstrip("/\\")
        return image or not _opens_as_page(path)
    if scheme.group(1) in _SAFE_SCHEMES:
        return True
    if image and scheme.group(1) == "attachment":
        return form[len("attachment:"):] in attachments
    return image and _DATA_IMAGE.fullmatch(form) is not None  # a rendered attachment


def _opens_as_page(path: str) -> bool:
    """Whether a browser shows the file `path` as a page, scripts running (HTML, SVG, XML),
    when formgrader serves it from the instructor's Jupyter server: tornado takes the type
    from the file's name, as mimetypes does here."""
    mime = mimetypes.guess_type(path)[0] or ""
    return mime in ("text/html", "message/rfc822") or mime.endswith(("/xml", "+xml"))


def renders_safely(markdown: str, attachments: Mapping | None = None) -> bool:
    """Whether `markdown`, rendered as feedback and formgrader render a markdown cell, has
    only the tags and attributes markdown makes and only safe link and image targets."""
    renderer = IPythonRenderer(escape=False, attachments=dict(attachments or {}))
    try:
        page = strip_files_prefix(MarkdownWithMath(renderer=renderer).render(markdown))
    except Exception:  # e.g. a missing attachment: feedback would fail on this cell too
        return False
    checker = _MarkupChecker(dict(attachments or {}))
    checker.feed(page)
    return checker.safe and "<" not in checker.rawdata


class _MarkupChecker(HTMLParser):
    """Reads rendered markdown; `safe` turns False at any tag, attribute or URL that
    markdown itself does not make, or at markup that is not a plain tag."""

    def __init__(self, attachments: dict) -> None:
        super().__init__(convert_charrefs=False)  # so a "<" left in text stays visible
        self.attachments = attachments
        self.safe = True

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.safe &= tag in _ALLOWED_TAGS and all(self._allowed(tag, *pair) for pair in attrs)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.handle_starttag(tag, attrs)

    def _allowed(self, tag: str, name: str, value: str | None) -> bool:
        value = value or ""
        if name not in _ALLOWED_ATTRIBUTES:
            return False
        if name in ("href", "src"):
            return _url_is_safe(value, tag == "img", self.attachments)
        if name == "style":
            return _ALIGN.fullmatch(value) is not None  # table column alignment
        return name != "type" or value == "checkbox"  # task lists

    def handle_data(self, data: str) -> None:
        self.safe &= "<" not in data

    def handle_comment(self, data: str) -> None:
        self.safe = False

    def handle_decl(self, decl: str) -> None:
        self.safe = False

    def handle_pi(self, data: str) -> None:
        self.safe = False

    def unknown_decl(self, data: str) -> None:
        self.safe = False


class CspHtmlExporter(HTMLExporter):
    """nbconvert's HTMLExporter whose every page carries CSP_META, so that no script in it
    runs (MathJax from its CDN included: formulas show as TeX), and nbconvert's own HTML
    sanitising is on."""

    @default("sanitize_html")
    def _sanitize_html_default(self) -> bool:
        return True

    def from_notebook_node(
        self, nb: NotebookNode, resources: dict | None = None, **kw: Any
    ) -> tuple:
        page, resources = super().from_notebook_node(nb, resources, **kw)
        return with_content_security_policy(page), resources


def with_content_security_policy(page: str) -> str:
    """`page` with CSP_META first in its <head> (a policy only covers what comes after it)."""
    head = re.search(r"<head\b[^>]*>", page, flags=re.IGNORECASE)
    if head is None:
        raise ValueError(
            "with_content_security_policy: expected an HTML page with a <head> tag, as "
            f"nbgrader's feedback template writes; got one starting {page[:80]!r}. A custom "
            "HTMLExporter.template_name must keep the <head> of the page."
        )
    return f"{page[:head.end()]}\n{CSP_META}{page[head.end():]}"


def protect(c: Config) -> Config:
    """Put the protections into nbgrader config `c` (again, harmlessly): NeutraliseStudentHtml
    in autograde after the grades are saved and first in generate_feedback, and
    CspHtmlExporter as generate_feedback's exporter."""
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.preprocessors import AssignLatePenalties, SaveAutoGrades

    autograde = _configured(c, Autograde, "autograde_preprocessors")
    if not _has(autograde, NeutraliseStudentHtml):
        # After SaveAutoGrades, which scores the outputs as executed and tells an
        # unanswered written answer by its unchanged source (and after the late penalty).
        grading = [i for i, step in enumerate(autograde)
                   if _is(step, SaveAutoGrades) or _is(step, AssignLatePenalties)]
        autograde.insert(grading[-1] + 1 if grading else len(autograde), NeutraliseStudentHtml)
    c.Autograde.autograde_preprocessors = autograde
    feedback = _configured(c, GenerateFeedback, "preprocessors")
    if not _has(feedback, NeutraliseStudentHtml):
        feedback.insert(0, NeutraliseStudentHtml)
    c.GenerateFeedback.preprocessors = feedback
    c.GenerateFeedback.exporter_class = CspHtmlExporter
    return c


def _configured(c: Config, converter: type, name: str) -> list:
    """The steps `c` gives `converter`'s list `name`, or the converter's default list."""
    section = c[converter.__name__]
    if name in section:
        return list(section[name])
    return list(converter.class_traits()[name].make_dynamic_default())


def _is(step: object, cls: type) -> bool:
    return step is cls or step == f"{cls.__module__}.{cls.__name__}"


def _has(steps: list, cls: type) -> bool:
    return any(_is(step, cls) for step in steps)
