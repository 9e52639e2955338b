"""The outbound policy of a user's components, for the engine to apply at run time.

``common.reach`` refuses the addresses an ordinary user may not name when a pipeline, knowledge
base, evaluation judge or credential is saved. A name may point elsewhere by the time a request is
sent, and a server may redirect, so the same policy also goes with the components a run builds
(the ``outbound`` infrastructure: every connection they open is checked) and with the credentials
it resolves (checked before a secret is sent).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from rag.clients.outbound import OutboundPolicy


def outbound_policy_for(owner: AbstractBaseUser | AnonymousUser | None) -> OutboundPolicy | None:
    """The addresses the components of ``owner`` may reach: None (any) for an administrator
    (a staff user), else public addresses and those in ``TRELLIS_OUTBOUND_ALLOW``."""
    if owner is not None and owner.is_staff:
        return None
    return OutboundPolicy(settings.TRELLIS_OUTBOUND_ALLOW)
