"""Typed errors of the publishing step; each message names what failed (file, language, ids)."""

from __future__ import annotations


class PublishError(RuntimeError):
    """The build cannot be published: an input is missing or inconsistent, or a write failed."""


class GateFailed(PublishError):
    """A CRITICAL gate check failed; nothing was published and the previous publication is untouched."""


class UploadError(PublishError):
    """The Hub upload failed; the local publication is in place, the frozen record did not grow."""
