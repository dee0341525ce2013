from __future__ import annotations

from bot.blocks import build_blocks, build_fallback_text
from socialrag.models import Draft, MemberMayCare, PaperMeta, SocialSignal

META = PaperMeta(
    7, "Attention <Is> All", "https://arxiv.org/abs/1706.03762", ("A. V", "N. S", "et al."), "NeurIPS", 2017, None
)


def draft(**kw: object) -> Draft:
    base = dict(
        team_id="T",
        channel_id="C",
        paper=META,
        style="template",
        explanation="For {@U1} and {@U2}: *key idea* & more.",
        signals=(SocialSignal(MemberMayCare("U1", 0.6), 1.0, members=("U1",)),),
        thread_link="https://lab.slack.com/archives/C/p1",
        thread_title="Earlier paper",
        mentions=("U1",),
        named={"U1": "ana", "U2": "ben"},
    )
    base.update(kw)
    return Draft(**base)  # type: ignore[arg-type]


def test_blocks_mention_only_who_may_be_notified() -> None:
    blocks = build_blocks(draft())
    text = blocks[0]["text"]["text"]
    assert text == "For <@U1> and ben: *key idea* &amp; more."
    assert blocks[1]["type"] == "context"
    assert (
        blocks[1]["elements"][0]["text"]
        == "<https://arxiv.org/abs/1706.03762|Attention &lt;Is&gt; All> · A. V, N. S, et al. · NeurIPS 2017"
    )
    assert blocks[2]["elements"][0]["text"] == "<https://lab.slack.com/archives/C/p1|Earlier thread: Earlier paper>"


def test_fallback_text_is_plain() -> None:
    assert (
        build_fallback_text(draft())
        == "For <@U1> and ben: key idea &amp; more. <https://arxiv.org/abs/1706.03762|Attention &lt;Is&gt; All>"
    )


def test_no_thread_no_thread_block() -> None:
    assert len(build_blocks(draft(thread_link=None))) == 2
