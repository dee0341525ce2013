"""Which stored paper a record is: a paper is one row in ``papers`` known by any number of identities in
``paper_ids``. When a record shows that two rows are the same paper (an arXiv id and a DOI, say), the rows are
merged into the older one; unless only an identity the record's authors claimed links them and the stored paper's
title and authors do not show it to be the record's paper (``resolve_paper_rows``).
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from socialrag.models import Paper
from socialrag.names import authors_agree, titles_agree

Key = tuple[str, str]


def ensure_papers(conn: psycopg.Connection, keys: Sequence[Key]) -> dict[Key, int]:
    """The paper id of every (scheme, value), creating empty papers for identities not seen before."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return {}
    found = load_paper_ids(conn, wanted)
    missing = [k for k in wanted if k not in found]
    if missing:
        new_ids = [
            r[0]
            for r in conn.execute(
                "INSERT INTO papers (fetch_attempts) SELECT 0 FROM generate_series(1, %(n)s) RETURNING id",
                {"n": len(missing)},
            ).fetchall()
        ]
        inserted = conn.execute(
            """
            INSERT INTO paper_ids (scheme, value, paper_id)
            SELECT * FROM unnest(%(s)s::text[], %(v)s::text[], %(p)s::bigint[])
            ON CONFLICT DO NOTHING RETURNING scheme, value, paper_id
            """,
            {"s": [k[0] for k in missing], "v": [k[1] for k in missing], "p": new_ids},
        ).fetchall()
        got = {(r[0], r[1]): r[2] for r in inserted}
        found.update(got)
        orphans = [pid for pid in new_ids if pid not in set(got.values())]
        if orphans:
            # Another process registered the same identities meanwhile: use its rows.
            conn.execute("DELETE FROM papers WHERE id = ANY(%(ids)s::bigint[])", {"ids": orphans})
            found.update(load_paper_ids(conn, [k for k in missing if k not in got]))
    return found


def load_paper_ids(conn: psycopg.Connection, keys: Sequence[Key]) -> dict[Key, int]:
    """The stored papers these identities name (an identity no paper has is left out; nothing is created)."""
    rows = conn.execute(
        """
        SELECT k.scheme, k.value, p.paper_id
          FROM unnest(%(s)s::text[], %(v)s::text[]) AS k(scheme, value)
          JOIN paper_ids p USING (scheme, value)
        """,
        {"s": [k[0] for k in keys], "v": [k[1] for k in keys]},
    ).fetchall()
    return {(r[0], r[1]): r[2] for r in rows}


def load_identities(conn: psycopg.Connection, paper_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    rows = conn.execute(
        "SELECT paper_id, scheme, value FROM paper_ids WHERE paper_id = ANY(%(ids)s::bigint[])",
        {"ids": list(paper_ids)},
    ).fetchall()
    out: dict[int, dict[str, str]] = {pid: {} for pid in paper_ids}
    for pid, scheme, value in rows:
        out.setdefault(pid, {})[scheme] = value
    return out


def merge_papers(conn: psycopg.Connection, keep: int, drop: Sequence[int]) -> None:
    """Fold papers ``drop`` into ``keep``: identities and the messages that shared them move over."""
    drop = [d for d in drop if d != keep]
    if not drop:
        return
    params = {"keep": keep, "drop": drop}
    conn.execute(
        """
        DELETE FROM message_papers d WHERE d.paper_id = ANY(%(drop)s::bigint[])
           AND EXISTS (SELECT 1 FROM message_papers k WHERE k.message_id = d.message_id AND k.paper_id = %(keep)s)
        """,
        params,
    )
    conn.execute("UPDATE message_papers SET paper_id = %(keep)s WHERE paper_id = ANY(%(drop)s::bigint[])", params)
    conn.execute("UPDATE paper_ids SET paper_id = %(keep)s WHERE paper_id = ANY(%(drop)s::bigint[])", params)
    conn.execute("DELETE FROM papers WHERE id = ANY(%(drop)s::bigint[])", params)


def resolve_paper_rows(
    conn: psycopg.Connection, papers: Sequence[Paper], anchors: Sequence[int | None] | None = None
) -> list[int]:
    """The stored paper each record is, created when none is, with the record's identities added to it. Stored
    papers one record names are merged. A stored paper named only by identities the record's authors claimed
    (``Paper.claims``: an arXiv entry's DOI) is that paper only when its title and authors are known and agree
    with the record's (``titles_agree``, ``authors_agree``); else it is neither merged in nor given those
    identities, when the record has another paper to be: an anchor (the stored paper a source was asked about,
    ``anchors[i]`` for ``papers[i]``), another paper it names, or identities not stored yet. A source's own
    identities are taken as it gives them; the records with no claim are taken first, so that a claim is checked
    against what the batch says of the paper it names."""
    marks = list(anchors) if anchors is not None else [None] * len(papers)
    existing = load_paper_ids(conn, [(s, v) for p in papers for s, v in p.ids.items()])
    known = {*existing.values(), *(a for a in marks if a is not None)}
    titles, authors = _load_titles(conn, known), _load_authors(conn, known)
    ids: list[int] = [0] * len(papers)
    kept: list[dict[str, str]] = [{} for _ in papers]
    merged: dict[int, int] = {}  # a paper merged into another by an earlier record of the batch
    for i in sorted(range(len(papers)), key=lambda i: bool(papers[i].claims)):
        paper, mark = papers[i], marks[i]
        anchor = merged.get(mark, mark) if mark is not None else None
        named = {key: existing[key] for key in paper.ids.items() if key in existing}
        matches = sorted({*named.values(), *([anchor] if anchor is not None else [])})
        claimed = {m for m in matches if all(k[0] in paper.claims for k, pid in named.items() if pid == m)}
        names = [a.name for a in paper.authors]
        apart = {
            m for m in claimed if m != anchor and not _shown_same(paper.title, names, titles.get(m), authors.get(m))
        }
        if apart and (len(apart) < len(matches) or len(named) < len(paper.ids)):
            matches = [m for m in matches if m not in apart]
            kept[i] = {s: v for s, v in paper.ids.items() if named.get((s, v)) not in apart}
        else:
            kept[i] = dict(paper.ids)
        if len(matches) > 1:
            merge_papers(conn, matches[0], matches[1:])
            for k, pid in list(existing.items()):
                if pid in matches[1:]:
                    existing[k] = matches[0]
            merged.update({m: matches[0] for m in matches[1:]})
            merged.update({m: matches[0] for m, into in merged.items() if into in matches[1:]})
        if matches and paper.title:
            titles[matches[0]] = paper.title
        if matches and names:
            authors[matches[0]] = names
        ids[i] = matches[0] if matches else 0
    ids = [merged.get(pid, pid) for pid in ids]  # a paper an earlier record was is merged into another by a later one
    fresh = [i for i, pid in enumerate(ids) if pid == 0]
    if fresh:
        paper_keys = [list(kept[i].items()) for i in fresh]
        created = ensure_papers(conn, [pk[0] for pk in paper_keys])
        for i, pk in zip(fresh, paper_keys, strict=True):
            ids[i] = created[pk[0]]
    all_rows = [(s, v, pid) for pid, own in zip(ids, kept, strict=True) for s, v in own.items()]
    conn.execute(
        """
        INSERT INTO paper_ids (scheme, value, paper_id)
        SELECT * FROM unnest(%(s)s::text[], %(v)s::text[], %(p)s::bigint[]) ON CONFLICT DO NOTHING
        """,
        {"s": [r[0] for r in all_rows], "v": [r[1] for r in all_rows], "p": [r[2] for r in all_rows]},
    )
    return ids


def _shown_same(title: str | None, names: list[str], stored_title: str | None, stored: list[str] | None) -> bool:
    """Whether a stored paper's title and authors, both known, show it to be the record's paper."""
    return (
        bool(title and stored_title and stored)
        and titles_agree(title, stored_title)
        and authors_agree(names, stored or [])
    )


def _load_authors(conn: psycopg.Connection, paper_ids: set[int]) -> dict[int, list[str]]:
    """The stored author names of these papers (one with none is left out)."""
    rows = conn.execute(
        """
        SELECT pa.paper_id, array_agg(a.name ORDER BY pa.position) FROM paper_authors pa
          JOIN authors a ON a.id = pa.author_id
         WHERE pa.paper_id = ANY(%(ids)s::bigint[]) GROUP BY pa.paper_id
        """,
        {"ids": sorted(paper_ids)},
    ).fetchall()
    return {r[0]: list(r[1]) for r in rows}


def _load_titles(conn: psycopg.Connection, paper_ids: set[int]) -> dict[int, str]:
    """The stored titles of these papers (one with none is left out)."""
    rows = conn.execute(
        "SELECT id, title FROM papers WHERE id = ANY(%(ids)s::bigint[]) AND title IS NOT NULL",
        {"ids": sorted(paper_ids)},
    ).fetchall()
    return {r[0]: r[1] for r in rows}
