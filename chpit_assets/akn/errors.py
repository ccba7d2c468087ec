"""Typed errors of reading Fedlex Akoma Ntoso files. Each names what it was reading."""

from __future__ import annotations


class AknError(ValueError):
    """A file is not a usable Fedlex consolidation. `where` names the act/edition/url."""

    stage = "parse"

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}")


class NotXml(AknError):
    """Not well-formed XML (truncated download, an HTML page served with 200)."""

    stage = "validate"


class NotAConsolidation(AknError):
    """Well-formed, but not a consolidated SR edition (e.g. a Federal Gazette text)."""

    stage = "validate"


class IdentityMismatch(AknError):
    """The file's own SR number, edition date or language disagree with the catalog."""

    stage = "validate"


class NotVerbatim(AknError):
    """A construct whose text the parser would not keep verbatim (a DOCTYPE, an entity declaration,
    a processing instruction): the file is refused rather than published with words missing."""

    stage = "validate"


class TooLarge(AknError):
    """The file is over the documented size limit (`identity.MAX_EDITION_BYTES`)."""

    stage = "validate"


class EmptyArticle(AknError):
    """An article with wording (paragraphs, a table, ...) whose extracted text is empty."""
