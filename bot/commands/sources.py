"""`/paperping sources`: where a channel's candidates come from, and what each source searches.

``sources`` shows them; ``sources all`` turns every source on; ``sources NAME [TERMS]...`` sets them:

- arXiv categories anywhere (``cs.CL``, any case) imply ``arxiv``; a word of a known archive that is none of its
  categories (``cs.FOO``) is answered with the archive's categories, since arXiv's search matches no other;
- the words after ``biorxiv`` or ``medrxiv`` are that server's categories (``cell_biology``, ``cell-biology``),
  checked against the server's own list;
- everything after ``pubmed`` is the PubMed query.
"""

from __future__ import annotations

from typing import Any

from bot.app_context import AppContext
from bot.commands.base import Command, Invocation, UsageError, command
from bot.views.post_blocks import quote_in_code
from socialrag import storage
from socialrag.knowledge import (
    ARXIV_CATEGORIES,
    CATEGORIES,
    SERVERS,
    arxiv_categories_in,
    normalize_arxiv_category,
    normalize_category,
)

SOURCE_NAMES = {
    "semanticscholar": "semanticscholar",
    "semantic-scholar": "semanticscholar",
    "s2": "semanticscholar",
    "arxiv": "arxiv",
    "catalog": "catalog",
    "local": "catalog",
    "openalex": "openalex",
    "biorxiv": "biorxiv",
    "medrxiv": "medrxiv",
    "pubmed": "pubmed",
}
ALL_SOURCES = ("catalog", "semanticscholar", "arxiv", "openalex", "biorxiv", "medrxiv", "pubmed")
MAX_QUERY = 300
TAXONOMY = "https://arxiv.org/category_taxonomy"
_HINT = (
    "Try `/paperping sources semanticscholar arxiv catalog`, `/paperping sources arxiv cs.CL cs.LG`, "
    "`/paperping sources openalex biorxiv cell_biology pubmed mitophagy` or `all`."
)


def _category_error(server: str, word: str) -> UsageError:
    close = sorted(c for c in CATEGORIES[server] if word.lower()[:4] in c)[:4]  # type: ignore[index]
    named = f" Did you mean {', '.join(f'`{c}`' for c in close)}?" if close else ""
    return UsageError(f"`{quote_in_code(word, 40)}` is not a {server} category.{named} {_HINT}")


def _arxiv_error(word: str, *, after_arxiv: bool) -> UsageError:
    """A word that is neither a source nor an arXiv category: the categories of its archive when it names one
    (``cs.FOO``, ``cs``), arXiv's archives when it follows ``arxiv`` (``hello``), else the usual hint."""
    shown = quote_in_code(word, 40)
    archive = word.partition(".")[0]
    if known := arxiv_categories_in(archive):
        return UsageError(
            f"`{shown}` is not an arXiv category, and arXiv is searched by category only. The {archive.lower()} "
            f"ones: {', '.join(known)} (every category: {TAXONOMY})."
        )
    if after_arxiv:
        return UsageError(
            f"`{shown}` is not an arXiv category. arXiv's are an archive and a subject, such as `cs.CL`, "
            f"`q-bio.GN` or `stat.ML`; the archives: {', '.join(ARXIV_CATEGORIES)} (every category: {TAXONOMY})."
        )
    return UsageError(f"`{shown}` is neither a source nor an arXiv category. {_HINT}")


def parse_sources(name: str, args: tuple[str, ...], rest: str) -> Command:
    """``sources``, ``sources all`` or ``sources NAME [TERMS]...``. Returns the chosen names, then ``--`` and
    the arXiv categories, then ``--biorxiv`` and ``--medrxiv`` with theirs; the PubMed query is the text."""
    if not args:
        return Command("sources")
    names: list[str] = []
    terms: dict[str, list[str]] = {"arxiv": [], "biorxiv": [], "medrxiv": []}
    server: str | None = None
    for i, word in enumerate(args):
        lowered = word.lower().strip(",")
        if lowered == "pubmed":
            query = " ".join(args[i + 1 :])[:MAX_QUERY].strip()
            names.append("pubmed")
            return _sources_command(names, terms, query)
        if lowered == "all":
            names += ALL_SOURCES
        elif lowered in SOURCE_NAMES:
            names.append(SOURCE_NAMES[lowered])
            server = SOURCE_NAMES[lowered]
        elif (category := normalize_arxiv_category(word.strip(","))) is not None:
            terms["arxiv"].append(category)
        elif server in SERVERS:
            found = normalize_category(server, lowered)
            if found is None:
                raise _category_error(server, word)
            terms[server].append(found)
        else:
            raise _arxiv_error(word.strip(","), after_arxiv=server == "arxiv")
    return _sources_command(names, terms, "")


def _sources_command(names: list[str], terms: dict[str, list[str]], query: str) -> Command:
    if terms["arxiv"] and "arxiv" not in names:
        names.append("arxiv")
    chosen = tuple(n for n in ALL_SOURCES if n in names)
    args = (*chosen, "--", *dict.fromkeys(terms["arxiv"]))
    for server in SERVERS:
        args += (f"--{server}", *dict.fromkeys(terms[server]))
    return Command("sources", args, query)


def _split(args: tuple[str, ...]) -> tuple[list[str], dict[str, list[str]]]:
    """The chosen names and each list of terms (``arxiv``, ``biorxiv``, ``medrxiv``) of a parsed command."""
    names: list[str] = []
    terms: dict[str, list[str]] = {"arxiv": [], "biorxiv": [], "medrxiv": []}
    into: list[str] = names
    for word in args:
        if word == "--":
            into = terms["arxiv"]
        elif word.startswith("--") and word[2:] in terms:
            into = terms[word[2:]]
        else:
            into.append(word)
    return names, terms


@command(
    "sources",
    "`sources` — where candidates come from; `sources semanticscholar arxiv catalog`, `sources arxiv cs.CL`, "
    "`sources openalex biorxiv cell_biology medrxiv epidemiology pubmed QUERY` or `all` sets it",
    parse=parse_sources,
    steers=lambda c: bool(c.args),
)
def cmd_sources(inv: Invocation) -> str:
    if inv.args:
        names, terms = _split(inv.args)
        values: dict[str, Any] = {"sources": names, "sources_chosen": True}
        values["source_terms"] = {
            **({"biorxiv": terms["biorxiv"]} if terms["biorxiv"] else {}),
            **({"medrxiv": terms["medrxiv"]} if terms["medrxiv"] else {}),
            **({"pubmed": inv.text} if inv.text else {}),
        }
        if terms["arxiv"] or "arxiv" not in names:
            values["arxiv_categories"] = terms["arxiv"]
        inv.set(**values)
        inv.announce(f"set where PaperPing looks for papers: {describe_sources(inv.ctx, inv.team, inv.channel)}.")
    shown = describe_sources(inv.ctx, inv.team, inv.channel)
    return f"Candidates here come from: {shown}." + ("" if inv.args else f"\n{_HINT}")


def describe_sources(ctx: AppContext, team: str, channel: str) -> str:
    """The channel's sources in words a member can check, with what each searches."""
    with ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, team, channel)
    terms = s.source_terms
    default = "" if s.sources_chosen else " when most papers shared here are not on arXiv"
    words = {
        "semanticscholar": "Semantic Scholar recommendations",
        "arxiv": "new arXiv papers in "
        + (", ".join(s.arxiv_categories) or "the categories of the arXiv papers shared here"),
        "catalog": "the local catalog",
        "openalex": f"recent OpenAlex works on this channel's topics{default}",
        "pubmed": f"PubMed's newest articles for `{quote_in_code(str(terms['pubmed']), 80)}`"
        if terms.get("pubmed")
        else f"PubMed's newest articles on this channel's topics{default}",
    }
    for server in SERVERS:
        named = ", ".join(str(c) for c in terms.get(server) or ())
        label = "bioRxiv" if server == "biorxiv" else "medRxiv"
        words[server] = f"new {label} preprints in " + (named or f"the categories of the {label} preprints shared here")
    parts = [words[n] for n in s.sources if n in words]
    if ctx.settings.offline:
        parts.append("(offline: only the local catalog is searched)")
    return "; ".join(parts) or "nowhere (`/paperping sources all` turns them all on)"
