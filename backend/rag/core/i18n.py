"""Marking engine messages for translation without importing Django.

``gettext_noop`` returns its argument unchanged; the name makes Django's ``makemessages``
(xgettext) collect the string into ``locale/``, so the Django layer can translate a
``FieldError`` by its ``template`` and ``context``.
"""


def gettext_noop(message: str) -> str:
    return message
