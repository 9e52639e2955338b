"""Full stops that end no sentence: an initial or a short title ("Rajendra K. Pachauri", "John F.
Kennedy", "EE. UU.", "Dr. Smith"). A text cut there shows the model a passage ending in "Rajendra K.",
and judges "Kennedy [1]." of an answer as a sentence of its own."""

from __future__ import annotations

import re

_ABBREVIATION = re.compile(r"(?<!\w)(?:[A-ZÁÉÍÓÚÑ]|EE|UU|Dr|Dra|Sr|Sra|Sres|Mr|Mrs|Ms|St)\.$")
_LONGEST = 5  # "Sres."


def ends_a_sentence(text: str, separator: re.Match[str]) -> bool:
    """Whether the sentence break ``separator`` found in ``text`` ends a sentence: a line break
    always does; white space after an initial or a short title and its full stop does not."""
    return "\n" in separator.group() or _ABBREVIATION.search(
        text, max(0, separator.start() - _LONGEST), separator.start()) is None
