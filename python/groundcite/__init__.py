"""groundcite: trustworthy retrieval-augmented answers.

Every factual sentence carries a citation to a numbered passage; every
citation is checked against what was actually sent and against what that
passage says; when the passages do not cover a question, the answer is an
honest refusal.

The checker (no index, no model)::

    import groundcite
    report = groundcite.check(passages, answer)
    report.status, report.bad_ids, report.unmarked, report.grounded

The pipeline::

    index = groundcite.Index("./.groundcite/index")
    index.ingest(["docs/"])
    answer = index.ask("How long does reimbursement take?")
"""

from __future__ import annotations

from typing import Any

from . import errors
from ._native import (
    REFUSAL,
    Answer,
    AskStream,
    Config,
    Counts,
    Evidence,
    Hit,
    Index,
    IngestSummary,
    Marker,
    Prompt,
    PromptPassage,
    Refusal,
    Report,
    Resolution,
    Retraction,
    Sentence,
    Source,
    Span,
    StreamedSentence,
    __version__,
    check,
    corrective_message,
    render_prompt,
    resolve,
    should_answer,
)
from .errors import (
    BadRequestError,
    ConfigError,
    GeneratorError,
    GroundciteError,
    IndexUnavailableError,
    InternalError,
    InvalidInputError,
    LimitExceededError,
)

__all__ = [
    "REFUSAL",
    "Answer",
    "AskStream",
    "BadRequestError",
    "Config",
    "ConfigError",
    "Counts",
    "Evidence",
    "GeneratorError",
    "GroundciteError",
    "Hit",
    "Index",
    "IndexUnavailableError",
    "IngestSummary",
    "InternalError",
    "InvalidInputError",
    "LimitExceededError",
    "Marker",
    "Prompt",
    "PromptPassage",
    "Refusal",
    "Report",
    "Resolution",
    "Retraction",
    "Sentence",
    "Source",
    "Span",
    "StreamedSentence",
    "__version__",
    "anthropic",
    "check",
    "corrective_message",
    "errors",
    "openai_compatible",
    "render_prompt",
    "resolve",
    "should_answer",
]


def openai_compatible(
    base_url: str,
    model: str,
    *,
    api_key_env: str | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """The settings of an OpenAI-compatible generator (vLLM, Ollama,
    llama.cpp's server, OpenAI), for ``Index.ask(generator=...)`` or
    ``Index(config=...)``. The API key is read from the environment variable
    ``api_key_env`` (default ``OPENAI_API_KEY``), never passed as text.
    Other keyword arguments are ``[openai]`` settings (``max_tokens``,
    ``temperature``, ``structured``...)."""
    out: dict[str, Any] = {
        "generator": "openai",
        "openai.base_url": base_url,
        "openai.model": model,
    }
    if api_key_env is not None:
        out["openai.api_key_env"] = api_key_env
    for key, value in settings.items():
        out[f"openai.{key}"] = value
    return out


def anthropic(
    model: str,
    *,
    api_key_env: str | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """The settings of Anthropic's Messages API as the generator (the key
    from ``api_key_env``, default ``ANTHROPIC_API_KEY``). Other keyword
    arguments are ``[anthropic]`` settings."""
    out: dict[str, Any] = {"generator": "anthropic", "anthropic.model": model}
    if api_key_env is not None:
        out["anthropic.api_key_env"] = api_key_env
    for key, value in settings.items():
        out[f"anthropic.{key}"] = value
    return out
