"""Pages built from Jinja2 templates that sit beside the code that fills them, with escaping on for every value
(autoescape): a template is a file a designer can read, and no value can reach the page unescaped unless the
code marks it as markup it made itself (``Markup``)."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined


@cache
def templates(package: str) -> Environment:
    """The templates of ``package`` (its ``templates/`` folder), escaping every value, failing on a missing one."""
    return Environment(
        loader=PackageLoader(package, "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
