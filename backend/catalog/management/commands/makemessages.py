"""Django's ``makemessages``, also collecting the engine's plural messages.

The engine marks a message whose wording depends on a count with
``rag.core.i18n.ngettext_noop(singular, plural)`` (it imports no Django); xgettext learns that
name here, so both forms land in one plural entry of ``locale/*/LC_MESSAGES/django.po``.
"""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [*makemessages.Command.xgettext_options, "--keyword=ngettext_noop:1,2"]
