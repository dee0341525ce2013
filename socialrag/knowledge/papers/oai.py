"""The JATS ``<article>`` of a full-text answer as the JATS reader takes it: inside an answer of PubMed Central's
OAI-PMH service (``GetRecord`` with ``metadataPrefix=pmc``: ``<OAI-PMH><GetRecord><record><metadata><article>``), or a
file whose elements are in JATS's namespace, its elements' names made plain where they stand (never written out and
parsed again: writing out recurses, and a crafted article nested thousands deep would overflow it). Parsed with
``defusedxml`` as the reader parses: a DOCTYPE with declarations of its own is refused, never expanded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from socialrag.knowledge.fulltext import MAX_BYTES, FullTextError
from socialrag.knowledge.fulltext.jats import read_xml


class NotOpenAccess(LookupError):
    """PMC answered an OAI-PMH error: it has no such article, or none of its full text in the open-access subset."""


OAI_ERRORS = {
    "idDoesNotExist": "it has no such article",
    "cannotDisseminateFormat": "its full text is not in PMC's open-access subset",
}


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _elements(root: Any) -> Iterator[Any]:
    """Every element of ``root``'s tree, in document order, walked with a stack of its own: ElementTree's ``iter``
    recurses, and a crafted article nested thousands deep would overflow it."""
    stack = [root]
    while stack:
        element = stack.pop()
        yield element
        stack.extend(reversed(element))


def article_of(data: bytes) -> Any:
    """The article element of ``data``, its elements' names plain (the root as it is when it is neither an article
    nor PMC's answer: the JATS reader says what it is). ``NotOpenAccess`` for PMC's error answers, ``FullTextError``
    when it cannot be read."""
    if len(data) > MAX_BYTES:
        raise FullTextError(f"the file has {len(data) // 1_000_000} MB; at most {MAX_BYTES // 1_000_000} MB is read")
    root = read_xml(data)
    if root.tag == "article":
        return root
    if _local(root.tag) == "OAI-PMH":
        error = next((e for e in _elements(root) if _local(e.tag) == "error"), None)
        if error is not None:
            code = str(error.get("code") or "")
            raise NotOpenAccess(OAI_ERRORS.get(code, f"it answered an error ({code[:60] or 'no code'})"))
        article = next((e for e in _elements(root) if _local(e.tag) == "article"), None)
        if article is None:
            raise FullTextError("the answer holds no article")
    elif _local(root.tag) == "article":
        article = root
    else:
        return root
    for element in _elements(article):
        if isinstance(element.tag, str):
            element.tag = _local(element.tag)
    return article
