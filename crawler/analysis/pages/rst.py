"""reStructuredText pages (ROCm's compatibility matrix, AWS Neuron's release notes), parsed by
docutils and written as HTML5, so their simple tables, grid tables, ``csv-table`` and
``list-table`` directives are tables and their section titles headings of the document model.
Pure: no I/O.

The page is upstream's text, so docutils is held to reading it: no file or URL is read
(``file_insertion_enabled`` off: ``include``, ``csv-table :file:/:url:``, ``raw :file:``), no raw
HTML passes (``raw_enabled`` off), no configuration file is read, and no message reaches stderr
(problems are collected; the first errors are named when a watched table is not found). A page
over ``MAX_RST_CHARS`` is refused (docutils takes seconds per 100 KB, more than linearly).

Sphinx is not docutils: its roles (``:ref:`` ``:doc:`` …) read as their title, its
containers (sphinx-design grids, cards, tabs and dropdowns) show their content, and its
directives that build content at documentation time (``toctree``, ``program-output``) are
left out, as an unknown directive is; footnote and citation references are markers, not text.
"""

from __future__ import annotations

import io
import re
from typing import Any, ClassVar

from docutils import nodes
from docutils.core import publish_doctree, publish_from_doctree
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.parsers.rst.directives.body import CodeBlock
from docutils.utils import Reporter

from crawler.analysis.pages.cells import ExtractionError, normalise_text
from crawler.analysis.pages.document import Document
from crawler.analysis.pages.markdown import parse_html

MAX_RST_CHARS = 1_000_000
MAX_PROBLEMS_SHOWN = 3
_SETTINGS: dict[str, Any] = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,  # never read docutils.conf files
    "report_level": Reporter.SEVERE_LEVEL + 1,  # nothing written anywhere...
    "halt_level": Reporter.SEVERE_LEVEL + 1,  # ...and nothing ends the parse
    "traceback": True,  # an exception is raised, never sys.exit
    "doctitle_xform": False,  # every section title stays a heading
    "sectsubtitle_xform": False,
    "initial_header_level": 1,
    "embed_stylesheet": False,
    "stylesheet_path": "",
    "syntax_highlight": "none",
    "smart_quotes": False,
    "image_loading": "link",
    "input_encoding": "unicode",
    "output_encoding": "unicode",
    "line_length_limit": 10_000,
}
_TITLE_TARGET_RE = re.compile(r"^(.*?)\s*<[^<>]*>$", re.DOTALL)
# fmt: off
_SPHINX_ROLES = (
    "ref", "doc", "term", "numref", "download", "any", "guilabel", "menuselection", "file",
    "samp", "command", "program", "option", "envvar", "kbd", "mimetype", "dfn", "keyword",
    "class", "func", "meth", "mod", "attr", "obj", "data", "exc", "const", "py:class",
    "py:func", "py:meth", "py:mod", "py:attr", "py:obj", "py:data", "py:exc", "c:func",
    "cpp:func", "cpp:class", "external", "github", "pr", "issue",
)
_CONTAINERS = (
    "dropdown", "tab-set", "tab-item", "tabs", "tab", "grid", "grid-item", "grid-item-card",
    "card", "card-carousel", "seealso", "versionadded", "versionchanged", "deprecated", "only",
    "hlist", "centered", "glossary",
)
_BUILT_LATER = (
    "toctree", "program-output", "literalinclude", "autosummary", "automodule", "autoclass",
    "autofunction", "highlight", "index", "tabularcolumns", "mermaid", "graphviz",
    "include-markdown",
)
# fmt: on


def _title_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any,
    options: Any = None, content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:  # fmt: skip
    """A Sphinx cross-reference as a reader sees it: ``:doc:`PyTorch <../pytorch>``` →
    ``PyTorch``; without a title, its target (``~`` marks dropped)."""
    match = _TITLE_TARGET_RE.match(text)
    shown = match.group(1) if match and match.group(1) else text.lstrip("~!")
    return [nodes.inline(rawtext, shown)], []


class _Container(Directive):
    """A Sphinx container: its argument as a title paragraph, then its content."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {}  # every option accepted and ignored

    def run(self) -> list[nodes.Node]:
        node = nodes.container()
        if self.arguments:
            node += nodes.paragraph(text=self.arguments[0])
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class _Dropped(Directive):
    """Content made when the documentation is built, not written in the page."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        return []


class _AnyOptions(dict[str, Any]):
    """An option spec that takes every option (Sphinx directives have many) as text."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        return directives.unchanged


_Container.option_spec = _AnyOptions()
_Dropped.option_spec = _AnyOptions()


def _register() -> None:
    """docutils' own registries are its extension points: Sphinx's names are added once."""
    for role in _SPHINX_ROLES:
        roles.register_local_role(role, _title_role)  # type: ignore[arg-type]
    for name in _CONTAINERS:
        directives.register_directive(name, _Container)
    for name in _BUILT_LATER:
        directives.register_directive(name, _Dropped)
    for name in ("code-block", "sourcecode"):
        directives.register_directive(name, CodeBlock)


_register()


class _CollectingParser(Parser):
    """The reST parser, keeping the errors it reports (nothing is written)."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def parse(self, inputstring: str, document: nodes.document) -> None:
        document.reporter.attach_observer(self._observe)
        super().parse(inputstring, document)

    def _observe(self, message: nodes.system_message) -> None:
        if message["level"] >= Reporter.ERROR_LEVEL and len(self.problems) < MAX_PROBLEMS_SHOWN:
            line = message.get("line")
            where = f"line {line}: " if line else ""
            self.problems.append(where + normalise_text(message.astext(), 200))


def parse_rst(body: str) -> Document:
    """A reStructuredText page as the document model; ExtractionError when it is too large,
    too deeply nested, or docutils fails on it."""
    if len(body) > MAX_RST_CHARS:
        raise ExtractionError(
            f"the reStructuredText page is {len(body):,} characters, over the "
            f"{MAX_RST_CHARS:,} the reader parses"
        )
    parser = _CollectingParser()
    settings = {**_SETTINGS, "warning_stream": io.StringIO()}
    try:
        doctree = publish_doctree(body.replace("\x00", "\ufffd"), parser=parser,
                                  settings_overrides=settings)  # fmt: skip
        for marker in list(doctree.findall((nodes.footnote_reference, nodes.citation_reference))):
            marker.parent.remove(marker)
        html = publish_from_doctree(doctree, writer="html5", settings_overrides=settings)
    except RecursionError:
        raise ExtractionError("document is too deeply nested to parse") from None
    except Exception as exc:  # docutils on hostile input: this page only, said plainly
        message = f"docutils could not read the page: {type(exc).__name__}: {exc}"
        raise ExtractionError(message) from None
    text = html if isinstance(html, str) else html.decode("utf-8", "replace")
    return Document(parse_html(text).soup, tuple(parser.problems))
