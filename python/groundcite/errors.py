"""Errors raised by groundcite, each with the stable ``code`` of the HTTP
service's error table (docs/http-api.md).

Findings are never errors: a bad citation, an uncited or unsupported
sentence is in the :class:`~groundcite.Report`. These are for input that
cannot be checked and for adapters that fail (an index that cannot be
opened, an unreachable model server).
"""

from __future__ import annotations

__all__ = [
    "GroundciteError",
    "InvalidInputError",
    "BadRequestError",
    "LimitExceededError",
    "ConfigError",
    "IndexUnavailableError",
    "GeneratorError",
    "InternalError",
]


class GroundciteError(Exception):
    """Every groundcite error. ``code`` is the service's error code."""

    code: str

    def __init__(self, message: str, code: str = "internal") -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


class InvalidInputError(GroundciteError, TypeError):
    """An argument of the wrong shape (``invalid_body``): a passage with no
    text, a config value of the wrong type."""


class BadRequestError(GroundciteError, ValueError):
    """A request that cannot be served as given (``empty_answer``,
    ``empty_question``, ``empty_query``, ``invalid_parameter``,
    ``bad_request``)."""


class LimitExceededError(GroundciteError, ValueError):
    """The answer or passages are over a check limit (``limit_exceeded``,
    ``[check.limits]``); the message names which."""


class ConfigError(GroundciteError, ValueError):
    """The configuration is wrong (``configuration``): an unknown key (the
    message names the key meant), a value of the wrong type, a model folder
    that is missing or broken."""


class IndexUnavailableError(GroundciteError):
    """The index cannot be opened or read (``index_unavailable``)."""


class GeneratorError(GroundciteError):
    """The LLM call failed (``llm_timeout``, ``llm_connect``, ``llm_http``,
    ``llm_rate_limited``, ``llm_invalid_response``, ``llm_empty_content``,
    ``llm_stream_interrupted``, ``llm_missing_api_key``, ``llm_config``)."""


class InternalError(GroundciteError):
    """A bug: please report it with the message."""
