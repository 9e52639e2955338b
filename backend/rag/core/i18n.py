"""Marking engine messages for translation without importing Django.

``gettext_noop`` returns its argument unchanged; the name makes Django's ``makemessages``
(xgettext) collect the string into ``locale/``, so the Django layer can translate a
``FieldError`` by its ``template`` and ``context``.
"""


def gettext_noop(message: str) -> str:
    return message


def ngettext_noop(singular: str, plural: str) -> tuple[str, str]:
    """Both forms of a message whose wording depends on a ``count`` in its context; ``make
    messages`` collects them as one plural entry (the catalog app's ``makemessages``)."""
    return singular, plural
