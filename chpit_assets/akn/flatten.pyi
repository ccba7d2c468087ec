# The compiled module's interface (flatten.pyx), for mypy and readers.
from collections.abc import Callable
from typing import TypeVar

from lxml import etree

R = TypeVar("R", bound=tuple[object, ...])

class ReservedCharacter(ValueError): ...
class MissingEId(ValueError): ...

class LostText(ValueError):
    e_id: str
    occurrence: int
    def __init__(self, e_id: str, occurrence: int) -> None: ...

def articles(
    root: etree._Element,
    article_type: type[R],
    article_number: Callable[[str, str], str | None],
) -> list[R]: ...
