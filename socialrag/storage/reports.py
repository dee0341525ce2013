"""Queries of the channel report and of the monthly reports due."""

from __future__ import annotations

from datetime import datetime

import psycopg


def load_monthly_reports_due(conn: psycopg.Connection, month_start: datetime) -> list[tuple[str, str]]:
    """Channels that asked for a monthly report and have not had this month's."""
    rows = conn.execute(
        """
        SELECT team_id, channel_id FROM channel_settings
         WHERE report_monthly AND active AND (report_last_at IS NULL OR report_last_at < %(m)s)
        """,
        {"m": month_start},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]
