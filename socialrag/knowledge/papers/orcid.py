"""ORCID's public API (``ORCID_API_URL``), for one thing: the name on an ORCID record, so that `/paperping follow
ORCID` can find the author on Semantic Scholar (whose authors have no ORCID lookup). No key is needed."""

from __future__ import annotations

import re
from typing import Any

import httpx

from socialrag.errors import NotFound
from socialrag.knowledge.papers.http import PoliteClient
from socialrag.knowledge.papers.source import clean_name

ORCID = re.compile(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]")


class OrcidApi:
    name = "orcid"

    def __init__(
        self, base_url: str, *, timeout: float = 20.0, transport: httpx.BaseTransport | None = None, **polite: Any
    ) -> None:
        headers = {"Accept": "application/json"}
        client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport, headers=headers)
        self.http = PoliteClient(self.name, client, min_interval=polite.pop("min_interval", 0.1), **polite)

    def fetch_name(self, orcid: str) -> str | None:
        """The given and family names on the ORCID record (``clean_name``: anyone writes their own record), or None
        (no such record, or no public name)."""
        if not ORCID.fullmatch(orcid):
            return None
        try:
            body = self.http.request_json("GET", f"{orcid}/person")
        except NotFound:
            return None
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, dict):
            return None
        parts = [name.get(k) for k in ("given-names", "family-name")]
        values = [p.get("value") for p in parts if isinstance(p, dict)]
        return clean_name(" ".join(v for v in values if isinstance(v, str)))

    def close(self) -> None:
        self.http.close()
