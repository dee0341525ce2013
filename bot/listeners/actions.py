"""The buttons on PaperPing's posts: relevant, not for us, save (and the feedback buttons under its streamed
answers, kept by ``delivery.agent_answers``). Slack is answered at once; then a
click on PaperPing's own post or digest is stored like a reaction of that member on that post (a second click
undoes it; ``knowledge.record_click``), the post is rendered again from its stored draft with the counts
(``chat.update``), and a save is confirmed privately to the member who clicked. A click on any other message, on
a button the stored post does not show, in a channel PaperPing has left (or was removed from, or that was
archived), or by a member who asked to be forgotten, stores nothing and says so."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.app_context import AppContext
from bot.delivery.agent_answers import FEEDBACK_ACTION, NO_MARK_KEPT, record_feedback
from bot.slack.dedupe import handled_id
from bot.slack.one_at_a_time import OneAtATime
from bot.slack.payloads import ts_to_datetime
from bot.views.post_blocks import (
    BUTTONS,
    build_blocks,
    build_digest_blocks,
    build_digest_text,
    build_fallback_text,
    digest_paper,
)
from socialrag import knowledge, storage
from socialrag.errors import PaperPingError
from socialrag.models import digest_from_json, draft_from_json

log = logging.getLogger(__name__)

KINDS = {action_id: kind for kind, action_id, _ in BUTTONS}


def click_place(body: dict[str, Any]) -> tuple[str, str, str] | None:
    """(channel, message ts, member) of a click on a message's button, None for anything else."""
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    ts = container.get("message_ts") or (body.get("message") or {}).get("ts")
    user = (body.get("user") or {}).get("id")
    if not (channel and ts and user):
        return None
    return str(channel), str(ts), str(user)


def button_on_post(stored: dict[str, Any], paper: int | None, kind: str) -> bool:
    """Whether the post as PaperPing stored it shows this button: a single post its one row (no paper), a digest a
    row for each of its papers (the first day's papers to rate: no *Save*). The payload's ``block_id`` is the
    clicking client's word; a row named for no paper of the digest, or none, would count for papers never shown
    there (a click on the digest itself counts for every paper it lists)."""
    digest = digest_from_json(stored)
    if digest is None:
        return paper is None
    shown = {d.paper.paper_id for d in digest.drafts}
    return paper in shown and not (kind == "save" and digest.kind == "onboarding")


def updated_post(
    stored: dict[str, Any],
    counts: dict[str, int],
    all_counts: dict[int, dict[str, int]] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """The post's blocks and text with the new counts, rendered again from its stored draft (a digest with each
    paper's counts, ``all_counts``); never from what the click's payload says the message showed."""
    digest = digest_from_json(stored)
    if digest is not None:
        return build_digest_blocks(digest, all_counts or {}), build_digest_text(digest)
    draft = draft_from_json(stored)
    return build_blocks(draft, counts), build_fallback_text(draft)


NOT_A_POST = "Only PaperPing's own posts count these buttons; this message is not one, so nothing was counted."
NOT_ON_POST = "That button is not one of this post's, so nothing was counted."
NOT_KEPT = "That post is no longer kept by PaperPing, so the click was not counted."
NOT_SERVED = "I'm no longer in this channel, so clicks on my old posts here are not counted."
FORGOTTEN = (
    "Nothing was stored: you asked me to forget you, so I keep no click of yours here. "
    "`/paperping remember-me` lifts that."
)


def handle_click(
    ctx: AppContext, client: WebClient, body: dict[str, Any], respond: Respond, updates: OneAtATime
) -> None:
    """A click, after Slack has its acknowledgement: stored, then the post updated (``chat.update``, one at a time a
    post: ``OneAtATime``), then a save confirmed privately."""
    action = (body.get("actions") or [{}])[0]
    kind = KINDS.get(str(action.get("action_id")))
    place = click_place(body)
    key = handled_id(body)
    if kind is None or place is None or key is None:
        return
    channel, ts, user = place
    paper = digest_paper(str(action.get("block_id") or ""))
    home = str((body.get("team") or {}).get("id") or "")
    team = ctx.slack.channel_team(home, channel)
    with ctx.db.connection() as conn:
        if not storage.slack_events.record_event(conn, key, team):
            return  # the same click delivered again
        if storage.privacy.is_forgotten(conn, (team, home), user):
            respond(text=FORGOTTEN, **PRIVATE)
            return
        if not storage.settings.load_channel_settings(conn, team, channel).active:  # left, removed or archived
            respond(text=NOT_SERVED, **PRIVATE)
            return
        stored = storage.posts.load_posted_draft(conn, team, channel, ts)  # only PaperPing's posts and digests
        if stored is None:
            deleted = storage.posts.is_deleted_post(conn, team, channel, ts)
            respond(text=NOT_KEPT if deleted else NOT_A_POST, **PRIVATE)
            return
        if not button_on_post(stored, paper, kind):
            respond(text=NOT_ON_POST, **PRIVATE)
            return
        target = ts if paper is None else knowledge.digest_item_ts(ts, paper)  # one paper of a digest
        clicked = knowledge.record_click(conn, team, channel, target, user, kind, click_time(action.get("action_ts")))
    if clicked is None:
        respond(text=NOT_KEPT, **PRIVATE)
        return
    updates.run((team, channel, ts), lambda: update_counts(ctx, client, team, channel, ts, stored))
    if kind == "save":
        saved = "Saved to this channel's reading list (`/paperping list` shows it)."
        respond(
            text=saved if clicked[0] else "Your save is undone; others' saves keep the paper on the list.", **PRIVATE
        )


PRIVATE: dict[str, Any] = {"response_type": "ephemeral", "replace_original": False}


def update_counts(ctx: AppContext, client: WebClient, team: str, channel: str, ts: str, stored: dict[str, Any]) -> None:
    """The post rendered again with its counts as stored now (each paper's, in a digest) and updated in Slack."""
    digest = digest_from_json(stored)
    with ctx.db.connection() as conn:
        counts = knowledge.load_click_counts(conn, team, channel, ts) if digest is None else {}
        all_counts = {
            d.paper.paper_id: knowledge.load_click_counts(
                conn, team, channel, knowledge.digest_item_ts(ts, d.paper.paper_id)
            )
            for d in (digest.drafts if digest is not None else ())
        }
    blocks, text = updated_post(stored, counts, all_counts)
    try:
        ctx.pacer.call(client.chat_update, channel=channel, ts=ts, blocks=blocks, text=text)
    except (SlackApiError, PaperPingError) as exc:  # the click is kept; the counts show at the next update
        log.warning("could not update the counts on a post in %s: %s", channel, exc)


def click_time(action_ts: Any) -> datetime:
    """When the member clicked (Slack's ``action_ts``), now when it is missing or malformed."""
    try:
        return ts_to_datetime(str(action_ts))
    except (TypeError, ValueError, OverflowError, OSError):
        return datetime.now(UTC)


def register(app: App, ctx: AppContext) -> None:
    def ack_at_once(ack: Ack) -> None:
        ack()  # Slack hears back within its 3 s whatever chat.update answers later (a 429 included)

    updates = OneAtATime()  # one update of a post at a time: a burst of clicks costs Slack two

    def clicked(client: WebClient, body: dict[str, Any], respond: Respond) -> None:
        handle_click(ctx, client, body, respond, updates)

    for _, action_id, _ in BUTTONS:
        app.action(action_id)(ack=ack_at_once, lazy=[clicked])

    def feedback(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        """A member's Helpful / Not helpful on one of PaperPing's answers in their Messages tab: kept, once each; a
        member who asked to be forgotten is told, only them, that nothing was kept."""
        ack()
        place = click_place(body)
        action = (body.get("actions") or [{}])[0]
        team = str((body.get("team") or {}).get("id") or "")
        if place is None or not isinstance(action, dict):
            return
        channel, ts, user = place
        refused = record_feedback(ctx, team, user, channel, ts, str(action.get("value") or ""))
        if refused == "ignored":
            log.warning("a feedback click with a value PaperPing never wrote was ignored")
        elif refused == "forgotten":  # said in the answer's thread when Slack names it
            root = (body.get("message") or {}).get("thread_ts") or (body.get("container") or {}).get("thread_ts")
            thread = {"thread_ts": str(root)} if root else {}
            try:
                ctx.pacer.call(client.chat_postEphemeral, channel=channel, user=user, text=NO_MARK_KEPT, **thread)
            except (SlackApiError, PaperPingError):
                log.warning("telling a forgotten member in %s that their mark was not kept failed", channel)

    app.action(FEEDBACK_ACTION)(feedback)
