"""The explanation style a channel gets (what members chose, else ``llm`` when an LLM is configured, else the
template with the paper's summary), and the process's LLM client."""

from __future__ import annotations

from socialrag.config import Settings
from socialrag.models import Style
from socialrag.recommender.explain.llm import LLMClient


def resolve_style(chosen: Style | None, llm_configured: bool) -> Style:
    """The one rule for a channel's explanation style: what members chose, else ``llm`` when an LLM is
    configured, else the template with the paper's summary."""
    if chosen is not None:
        return chosen
    return "llm" if llm_configured else "template+tldr"


def describe_style(chosen: Style | None, llm_configured: bool) -> str:
    """The style as members see it in status and App Home: the chosen one, or the default in force."""
    style = resolve_style(chosen, llm_configured)
    return f"`{style}`" if chosen else f"`{style}` (the default)"


def build_llm(settings: Settings) -> LLMClient | None:
    """The process's LLM client, or None when offline or when no OpenAI-compatible server is configured."""
    if not settings.llm_configured:
        return None
    return LLMClient(
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key,
        timeout=settings.llm_timeout,
    )
