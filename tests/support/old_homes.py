"""Writes the old-home fixtures of ``tests/data/old_homes/``: the schema a home had at an old commit (its
``sql/`` files read from git, recorded in ``schema_migrations`` as that code recorded them) and a lab's data
inserted with plain SQL written for that schema.

    python -m tests.support.old_homes d484cf4 tests/data/old_homes/v0001_first_commit.sql

The tests read the written files only; regenerating needs the git history and the bundled embedding model.
Each data block is for the migration that made its tables, and goes in only where the commit has it.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from socialrag.knowledge.embed import Embedder
from tests.support.labbase import SHARED, catalog_lines

TEAM, CHANNEL = "T0OLD", "C0LAB"
MODEL = "all-MiniLM-L6-v2"
_FILE = re.compile(r"^sql/(\d{4})_([a-z0-9_]+)\.sql$")


def old_migrations(commit: str) -> list[tuple[int, str, str]]:
    """(version, name, text) of the migrations in ``sql/`` at ``commit``, in order."""
    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{commit}:sql/"], capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in sorted(listing):
        m = _FILE.match(f"sql/{name}")
        if m:
            text = subprocess.run(
                ["git", "show", f"{commit}:sql/{name}"], capture_output=True, text=True, check=True
            ).stdout
            found.append((int(m.group(1)), m.group(2), text))
    return found


def quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def chosen_papers() -> list[dict[str, object]]:
    """Three papers the lab shared and five more of the catalog, real ACL 2020 papers."""
    lines = {d["acl_id"]: d for d in catalog_lines()}
    shared = [lines[SHARED[k]] for k in ("weight", "deceive", "tabert")]
    others = [d for k, d in lines.items() if k not in SHARED.values() and d.get("abstract")][:5]
    return shared + others


def paper_rows(papers: list[dict[str, object]], embedder: Embedder) -> str:
    """Papers 1..8 with their ids, authors and vectors (the text embedded is the one today's code embeds)."""
    texts = [f"{p['title']}\n{p.get('abstract') or ''}" for p in papers]
    vectors = np.asarray(embedder.encode(texts), dtype=np.float32)
    out = ["INSERT INTO venues (id, name, normalized_name) VALUES (1, 'ACL', 'acl');"]
    author_ids: dict[str, int] = {}
    for i, (p, vec) in enumerate(zip(papers, vectors, strict=True), start=1):
        acl = str(p["acl_id"])
        out.append(
            "INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog,"
            " metadata_source, fetched_at, created_at) VALUES"
            f" ({i}, {quote(str(p['title']))}, {quote(str(p.get('abstract') or ''))}, 1, 2020, '2020-07-05',"
            f" 'https://aclanthology.org/{acl}/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');"
        )
        out.append(f"INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', {quote(acl)}, {i});")
        for pos, name in enumerate(list(p["authors"])[:3]):  # type: ignore[call-overload]
            if name not in author_ids:
                author_ids[name] = len(author_ids) + 1
                norm = " ".join(name.lower().split())
                out.append(
                    f"INSERT INTO authors (id, name, normalized_name) VALUES"
                    f" ({author_ids[name]}, {quote(name)}, {quote(norm)});"
                )
            out.append(
                f"INSERT INTO paper_authors (paper_id, position, author_id) VALUES ({i}, {pos}, {author_ids[name]});"
            )
        literal = "[" + ",".join(format(float(x), ".6g") for x in vec) + "]"
        out.append(
            "INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at)"
            f" SELECT id, '{MODEL}', md5(title || E'\\n' || COALESCE(abstract, '')), '{literal}',"
            f" '2020-10-01T08:05:00Z' FROM papers WHERE id = {i};"
        )
    return "\n".join(out)


# The lab's channel as the first release kept it: three shares, a thread reply, reactions, an import checkpoint.
CHANNEL_0001 = f"""
INSERT INTO teams (team_id, name, domain, created_at) VALUES ('{TEAM}', 'Old Lab', 'oldlab', '2020-10-01T08:00:00Z');
INSERT INTO channels (team_id, channel_id, name, created_at)
VALUES ('{TEAM}', '{CHANNEL}', 'nlp-lab', '2020-10-01T08:00:00Z');
INSERT INTO channel_members (team_id, channel_id, user_id) VALUES
 ('{TEAM}', '{CHANNEL}', 'U1'), ('{TEAM}', '{CHANNEL}', 'U2'), ('{TEAM}', '{CHANNEL}', 'U3'), ('{TEAM}', '{CHANNEL}', 'U4');
INSERT INTO messages (id, team_id, channel_id, ts, thread_ts, user_id, text, permalink, posted_at, reply_count) VALUES
 (1, '{TEAM}', '{CHANNEL}', '1604311200.000100', '1604311200.000100', 'U2',
  '<https://aclanthology.org/{SHARED["weight"]}/|Weight poisoning> scary and well done',
  'https://oldlab.slack.com/archives/{CHANNEL}/p1604311200000100', '2020-11-02T10:00:00Z', 1),
 (2, '{TEAM}', '{CHANNEL}', '1604314800.000200', '1604311200.000100', 'U3',
  'the RIPPLe regulariser is a neat trick, see <https://aclanthology.org/{SHARED["weight"]}/>',
  'https://oldlab.slack.com/archives/{CHANNEL}/p1604314800000200', '2020-11-02T11:00:00Z', 0),
 (3, '{TEAM}', '{CHANNEL}', '1605866400.000300', NULL, 'U3', 'https://doi.org/10.18653/v1/{SHARED["deceive"]}',
  'https://oldlab.slack.com/archives/{CHANNEL}/p1605866400000300', '2020-11-20T10:00:00Z', 0),
 (4, '{TEAM}', '{CHANNEL}', '1606816800.000400', NULL, 'U2',
  '<https://www.aclweb.org/anthology/{SHARED["tabert"]}.pdf|TaBERT>',
  'https://oldlab.slack.com/archives/{CHANNEL}/p1606816800000400', '2020-12-01T10:00:00Z', 0);
INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url, label) VALUES
 (1, 1, '{TEAM}', '{CHANNEL}', 'https://aclanthology.org/{SHARED["weight"]}/', 'Weight poisoning'),
 (2, 1, '{TEAM}', '{CHANNEL}', 'https://aclanthology.org/{SHARED["weight"]}/', NULL),
 (3, 2, '{TEAM}', '{CHANNEL}', 'https://doi.org/10.18653/v1/{SHARED["deceive"]}', NULL),
 (4, 3, '{TEAM}', '{CHANNEL}', 'https://www.aclweb.org/anthology/{SHARED["tabert"]}.pdf', 'TaBERT');
INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at) VALUES
 (1, '{TEAM}', '{CHANNEL}', 'U3', '+1', '2020-11-02T10:00:00Z'),
 (1, '{TEAM}', '{CHANNEL}', 'U4', '+1', '2020-11-02T10:00:00Z'),
 (1, '{TEAM}', '{CHANNEL}', 'U1', 'eyes', '2020-11-02T10:00:00Z'),
 (3, '{TEAM}', '{CHANNEL}', 'U2', 'heart', '2020-11-20T10:00:00Z'),
 (4, '{TEAM}', '{CHANNEL}', 'U4', '-1', '2020-12-01T10:00:00Z');
INSERT INTO emoji_sentiments (team_id, channel_id, emoji, sentiment, updated_at)
VALUES ('{TEAM}', '{CHANNEL}', 'eyes', 'positive', '2020-11-03T08:00:00Z');
INSERT INTO paper_references (citing_paper_id, cited_scheme, cited_value, contexts)
VALUES (4, 'acl', '{SHARED["weight"]}', ARRAY['Poisoned pre-trained weights can plant backdoors [12].']);
INSERT INTO import_checkpoints (team_id, channel_id, source, cursor, state, started_at, updated_at, completed_at)
VALUES ('{TEAM}', '{CHANNEL}', 'export', NULL, '{{"files": 3}}', '2020-12-02T08:00:00Z', '2020-12-02T08:01:00Z',
        '2020-12-02T08:01:00Z');
"""

# (user id, display name, real name, timezone)
MEMBERS = [
    ("U1", "graham", "Graham N", "America/New_York"),
    ("U2", "ben", "Ben K", "Europe/Berlin"),
    ("U3", "chen", "Chen L", "Asia/Shanghai"),
    ("U4", "dee", None, None),
]


def members_sql(real_names: bool) -> str:
    """The members' rows; ``real_names``: the schema still has ``members.real_name`` (0014 dropped it)."""
    rows = []
    for uid, shown, real, tz in MEMBERS:
        cells = [quote(TEAM), quote(uid), quote(shown)] + ([quote(real) if real else "NULL"] if real_names else [])
        rows.append("(" + ", ".join([*cells, quote(tz) if tz else "NULL", "'2020-10-01T08:00:00Z'"]) + ")")
    columns = "team_id, user_id, display_name" + (", real_name" if real_names else "") + ", timezone, updated_at"
    return f"INSERT INTO members ({columns}) VALUES\n " + ",\n ".join(rows) + ";"


CITATIONS_0002 = """
INSERT INTO paper_citations (cited_paper_id, citing_scheme, citing_value, citing_title, citing_year, contexts)
VALUES (1, 's2', 'a1b2c3', 'Backdoors in pretrained encoders, revisited', 2021, ARRAY['as shown by [3]']);
UPDATE papers SET citations_fetched_at = '2020-12-02T09:00:00Z' WHERE id = 1;
"""

# A post as the first posting release recorded it (the draft is that release's dataclasses as JSON).
_DRAFT = (
    '{"team_id": "T0OLD", "channel_id": "C0LAB", "style": "template", "score": 0.71, "fallback_reason": null,'
    ' "paper": {"paper_id": 5, "title": "old title", "url": "https://aclanthology.org/", "authors": [],'
    ' "venue": "ACL", "year": 2020, "summary": null, "ids": {}},'
    ' "explanation": "Related to the thread <@U2> started.", "thread_link": null, "thread_title": null,'
    ' "mentions": ["U2"], "named": {"U2": "ben"}, "signals": [{"kind": "h5", "strength": 0.8, "facts": {},'
    ' "members": ["U2"], "permalinks": [], "emoji": [], "authors": [], "venues": [], "counts": [],'
    ' "related_paper_id": 1, "category": "II"}]}'
)
RECOMMEND_0003 = f"""
INSERT INTO channel_settings (team_id, channel_id, style, frequency, updated_at)
VALUES ('{TEAM}', '{CHANNEL}', 'template', 'daily', '2020-12-02T08:00:00Z');
INSERT INTO member_settings (team_id, user_id, mentions_enabled, confirmed_names, updated_at) VALUES
 ('{TEAM}', 'U1', true, ARRAY['graham neubig'], '2020-12-02T08:00:00Z'),
 ('{TEAM}', 'U4', false, '{{}}', '2020-12-02T08:00:00Z');
INSERT INTO recommendations (id, team_id, channel_id, slot_key, paper_id, status, style, score, draft, message_ts,
                             created_at, posted_at)
VALUES (1, '{TEAM}', '{CHANNEL}', '2021-01-12T09:00:00+00:00', 5, 'posted', 'template', 0.71, '{_DRAFT}',
        '1610442000.000500', '2021-01-12T09:00:00Z', '2021-01-12T09:00:05Z');
UPDATE recommendations SET draft = jsonb_set(draft, '{{paper,title}}', to_jsonb((SELECT title FROM papers WHERE id = 5)));
INSERT INTO llm_calls (id, team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, prompt_tokens,
                       completion_tokens, latency_ms, outcome, output, created_at)
VALUES (1, '{TEAM}', '{CHANNEL}', 'explain', 1, 'abc123', 'gpt-4o-mini', 812, 64, 900, 'ok', 'Related to ...',
        '2021-01-12T09:00:03Z');
UPDATE papers SET arxiv_categories = ARRAY['cs.CL'] WHERE id = 2;
"""

SLACK_0005 = f"""
UPDATE teams SET timezone = 'Europe/Berlin', bot_user_id = 'UBOT' WHERE team_id = '{TEAM}';
UPDATE channel_settings SET timezone = 'Europe/Berlin', post_start_hour = 9, post_end_hour = 17, weekdays_only = true,
       next_post_at = '2021-01-13T09:00:00Z', last_post_at = '2021-01-12T09:00:05Z',
       last_activity_at = '2020-12-01T10:00:00Z'
 WHERE team_id = '{TEAM}' AND channel_id = '{CHANNEL}';
INSERT INTO installations (team_id, team_name, bot_token, bot_user_id, bot_id, installer_id, scopes, installed_at)
VALUES ('{TEAM}', 'Old Lab', 'xoxb-old-plaintext', 'UBOT', 'BOLD', 'U1', 'chat:write', '2020-10-01T08:00:00Z');
INSERT INTO processed_events (event_id, team_id, received_at) VALUES ('Ev0OLD', '{TEAM}', '2021-01-12T10:00:00Z');
"""


def data_sql(versions: set[int], embedder: Embedder) -> str:
    parts = [paper_rows(chosen_papers(), embedder), CHANNEL_0001, members_sql(14 not in versions)]
    parts += [block for v, block in ((2, CITATIONS_0002), (3, RECOMMEND_0003), (5, SLACK_0005)) if v in versions]
    serials = ["papers", "messages", "venues", "authors"] + (["recommendations", "llm_calls"] if 3 in versions else [])
    parts += [f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), (SELECT max(id) FROM {t}));" for t in serials]
    return "\n".join(parts)


def build_fixture(commit: str, embedder: Embedder) -> str:
    """The whole fixture: the old schema, its ``schema_migrations`` rows, and the lab's data."""
    full = subprocess.run(["git", "rev-parse", commit], capture_output=True, text=True, check=True).stdout.strip()
    migrations = old_migrations(full)
    out = [f"-- A PaperPing home as commit {full} left it (written by tests/support/old_homes.py).\n"]
    for version, name, text in migrations:
        out.append(f"-- sql/{version:04d}_{name}.sql at that commit\n{text}")
    out.append(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now());"
    )
    for version, name, text in migrations:
        digest = hashlib.sha256(text.encode()).hexdigest()
        out.append(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at)"
            f" VALUES ({version}, '{name}', '{digest}', '2020-10-01T08:00:00Z');"
        )
    out.append("-- the lab's data, written for this schema")
    out.append(data_sql({v for v, _, _ in migrations}, embedder))
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    commit, target = argv
    Path(target).write_text(build_fixture(commit, Embedder()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
