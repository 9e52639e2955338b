"""API tokens in the admin: staff see every user's tokens (never a secret: only its hash is
stored), revoke them, and make one for a user, whose secret is shown once, on the next page.

These are the tokens the product uses (the OpenAI-compatible API and MCP check them). DRF's
authtoken app registers its own "Tokens" section (keys kept in plain text, which nothing in
Trellis makes or documents); it is taken out of the admin so that staff find one token section,
the right one.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from rest_framework.authtoken.models import TokenProxy

from . import services
from .models import ApiToken

if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "prefix", "active", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "prefix", "owner__username")
    actions = ["revoke"]

    @admin.display(boolean=True, description=_("active"))
    def active(self, token: ApiToken) -> bool:
        return token.active

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> Any:
        if obj is None:
            return ("owner", "name")
        return ("owner", "name", "prefix", "created_at", "last_used_at", "revoked_at")

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> Any:
        return () if obj is None else ("owner", "prefix", "created_at", "last_used_at", "revoked_at")

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            obj.save(update_fields=["name"])
            return
        issued = services.api_token_create(owner=obj.owner, name=obj.name)
        # The admin goes on with ``obj`` (its log entry, its redirect): it becomes the stored row.
        obj.__dict__.update({field.attname: getattr(issued.token, field.attname)
                             for field in ApiToken._meta.concrete_fields})
        messages.warning(request, gettext("The token for %(user)s is %(secret)s — copy it now: it is not shown again.")
                         % {"user": obj.owner, "secret": issued.secret})

    @admin.action(description=_("Revoke the selected tokens"))
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = 0
        for token in queryset.filter(revoked_at__isnull=True):
            services.api_token_revoke(token=token)
            count += 1
        self.message_user(request, ngettext("Revoked %(count)d token.", "Revoked %(count)d tokens.", count)
                          % {"count": count})
