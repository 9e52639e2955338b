"""Full stops that end no sentence: an initial or a short title ("Rajendra K. Pachauri", "John F.
Kennedy", "EE. UU.", "Dr. Smith"). A text cut there shows the model a passage ending in "Rajendra K.",
and judges "Kennedy [1]." of an answer as a sentence of its own."""

from __future__ import annotations

import re

_ABBREVIATION = re.compile(r"(?<!\w)(?:[A-ZÁÉÍÓÚÑ]|EE|UU|Dr|Dra|Sr|Sra|Sres|Mr|Mrs|Ms|St)\.$")
_LONGEST = 5  # "Sres."


def ends_with_abbreviation(text: str, end: int) -> bool:
    """Whether ``text[:end]`` ends with an initial or a short title and its full stop."""
    return _ABBREVIATION.search(text, max(0, end - _LONGEST), end) is not None
