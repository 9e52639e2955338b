"""Session sign-in for the browser app (Django's session authentication, CSRF enforced), and the
signed-in user's API tokens."""

from __future__ import annotations

from django.contrib.auth import authenticate, login, logout
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import Invalid, get_for_owner, message_error, validated

from . import selectors, services
from .services import username_normalized


@extend_schema_serializer(component_name="Session")
class SessionSerializer(serializers.Serializer):
    authenticated = serializers.BooleanField()
    id = serializers.IntegerField(allow_null=True)
    username = serializers.CharField(allow_null=True)
    is_staff = serializers.BooleanField()


def _session(user) -> dict:
    if not user.is_authenticated:
        return {"authenticated": False, "id": None, "username": None, "is_staff": False}
    return {"authenticated": True, "id": user.pk, "username": user.get_username(), "is_staff": user.is_staff}


@method_decorator(ensure_csrf_cookie, name="get")
class SessionApi(APIView):
    """Who is signed in (GET), sign in (POST), sign out (DELETE)."""

    permission_classes = [AllowAny]

    @extend_schema_serializer(component_name="SignIn")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=256, style={"input_type": "password"}, write_only=True)

    @extend_schema(operation_id="auth_session_retrieve", responses=SessionSerializer)
    def get(self, request: Request) -> Response:
        return Response(SessionSerializer(_session(request.user)).data)

    @extend_schema(operation_id="auth_session_create", request=InputSerializer,
                   responses={200: SessionSerializer, 400: None})
    def post(self, request: Request) -> Response:
        # DRF checks CSRF only for signed-in users; signing in must be protected too (login CSRF).
        SessionAuthentication().enforce_csrf(request)
        credentials = self.InputSerializer(data=request.data)
        credentials.is_valid(raise_exception=True)
        # The name as the admin's login form reads it (and as the throttle counted it).
        user = authenticate(request._request, username=username_normalized(credentials.validated_data["username"]),
                            password=credentials.validated_data["password"])
        if user is None:
            return Response({"detail": _("The user name or password is wrong.")}, status=status.HTTP_400_BAD_REQUEST)
        login(request._request, user)
        return Response(SessionSerializer(_session(user)).data)

    @extend_schema(operation_id="auth_session_destroy", responses={204: None})
    def delete(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_serializer(component_name="ApiToken")
class ApiTokenOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The token's first characters, to tell it apart (never the whole token).")
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


@extend_schema_serializer(component_name="IssuedApiToken")
class IssuedApiTokenOutputSerializer(ApiTokenOutputSerializer):
    token = serializers.CharField(help_text="The secret, shown this once: Trellis keeps only its hash.")


class ApiTokenListApi(APIView):
    """The signed-in user's API tokens, newest first (revoked ones too)."""

    @extend_schema(operation_id="api_tokens_list", responses=ApiTokenOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(ApiTokenOutputSerializer(selectors.api_token_list(user=request.user), many=True).data)


class ApiTokenCreateApi(APIView):
    """Make a token for the OpenAI-compatible API and the MCP server; its secret is in this
    answer only."""

    @extend_schema_serializer(component_name="ApiTokenCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)

    @extend_schema(operation_id="api_tokens_create", request=InputSerializer,
                   responses={201: IssuedApiTokenOutputSerializer})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        try:
            issued = services.api_token_create(owner=request.user, name=data["name"])
        except services.TooManyTokens as exc:
            raise Invalid([message_error("", exc.template, exc.code, request.LANGUAGE_CODE, **exc.context)]) from None
        body = {**ApiTokenOutputSerializer(issued.token).data, "token": issued.secret}
        return Response(IssuedApiTokenOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class ApiTokenRevokeApi(APIView):
    """Revoke a token: every request made with it is refused from now on."""

    @extend_schema(operation_id="api_tokens_revoke", request=None, responses=ApiTokenOutputSerializer)
    def post(self, request: Request, api_token_id: int) -> Response:
        token = get_for_owner(selectors.api_token_get, user=request.user, api_token_id=api_token_id)
        return Response(ApiTokenOutputSerializer(services.api_token_revoke(token=token)).data)
