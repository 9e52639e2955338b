"""Models API: what this machine can run, install requests (hub, folder, uploaded zip) and
removing a model. Progress is streamed on ``ws/models/``."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import (
    INVALID,
    LANG_PARAMETER,
    FieldErrorsSerializer,
    config_errors,
    errors_response,
    get_for_owner,
    validated,
)
from rag.core import ConfigValidationError
from rag.models_manager import INSTALLABLE_KINDS, KINDS

from . import selectors, services
from .models import ModelInstall


@extend_schema_serializer(component_name="ModelEnables")
class EnablesSerializer(serializers.Serializer):
    components = serializers.ListField(child=serializers.CharField())
    presets = serializers.ListField(child=serializers.CharField())


@extend_schema_serializer(component_name="InstalledModel")
class ModelOutputSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="What pipelines name it by (a cross-encoder's model_name).")
    display_name = serializers.CharField(help_text="The model's own name (Qwen2.5-Coder 1.5B Instruct (Q4_K_M)) for "
                                                   "a packaged model; an installed one's is its name.")
    upstream = serializers.CharField(help_text="Where its authors publish a packaged model (a Hugging Face id); "
                                               "empty for an installed one (source_detail says where it came from).")
    kind = serializers.ChoiceField(choices=KINDS)
    source = serializers.ChoiceField(choices=["package", "hub", "zip", "folder"])
    source_detail = serializers.CharField(help_text="The package, hub id, uploaded file or folder it came from.")
    revision = serializers.CharField(help_text="The hub commit of a hub install.")
    size = serializers.IntegerField(help_text="Bytes on disk.")
    license = serializers.CharField(allow_null=True)
    installed_at = serializers.CharField(allow_null=True)
    details = serializers.DictField(help_text='What the load check learnt: {"labels": 1} or {"dimension": 384}.')
    enables = EnablesSerializer(help_text="The components and presets it lets run.")
    removable = serializers.BooleanField(
        help_text="Installed (not packaged), and this user may remove it: an administrator any, a user their own.")
    private = serializers.BooleanField(
        help_text="Private to the user who installed it (an ordinary user's upload or hub install); others "
                  "neither see nor use it. False: every user may use it.")
    owner = serializers.CharField(allow_null=True, help_text="Whose private model it is (shown to its owner and "
                                                             "administrators); null for a shared model.")


class ModelListApi(APIView):
    """The models this machine can run, packaged and installed, by kind."""

    class FilterSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=KINDS, required=False)

    @extend_schema(operation_id="models_list", parameters=[FilterSerializer], responses=ModelOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return Response(ModelOutputSerializer(selectors.model_list(user=request.user, **filters.validated_data),
                                              many=True).data)


class ModelInstallerApi(APIView):
    """What installing can do here: whether the hub is reachable in principle (not offline),
    the hub used, the size limit, and what this user may do."""

    @extend_schema_serializer(component_name="ModelInstaller")
    class OutputSerializer(serializers.Serializer):
        offline = serializers.BooleanField(help_text="TRELLIS_OFFLINE=1: no hub download.")
        hub_endpoint = serializers.CharField(help_text="HF_ENDPOINT, else https://huggingface.co.")
        max_bytes = serializers.IntegerField(help_text="TRELLIS_MAX_MODEL_MB in bytes.")
        kinds = serializers.ListField(child=serializers.CharField(), help_text="The kinds that can be installed.")
        can_install_folders = serializers.BooleanField()
        can_remove = serializers.BooleanField(help_text="May remove every installed model (administrators).")
        installs_private = serializers.BooleanField(
            help_text="What this user installs (an upload, a hub download) is private to them: other users "
                      "neither see nor use it. False for administrators, whose installs every user shares.")

    @extend_schema(operation_id="models_installer", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(selectors.installer_settings(user=request.user)).data)


@extend_schema_serializer(component_name="ModelInstall")
class InstallOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.ChoiceField(choices=ModelInstall.Source.choices)
    reference = serializers.CharField(help_text="Hub model id, uploaded file name or folder path.")
    revision = serializers.CharField()
    kind = serializers.ChoiceField(choices=ModelInstall.Kind.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=ModelInstall.Status.choices)
    done = serializers.IntegerField(source="bytes_done", help_text="Bytes downloaded or extracted so far.")
    total = serializers.IntegerField(source="bytes_total")
    size = serializers.IntegerField()
    error = serializers.SerializerMethodField(help_text="Why it failed, in the request's language.")
    error_code = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_error(self, install: ModelInstall) -> str | None:
        return selectors.install_error(install, self.context.get("language"))


def _install_data(install: ModelInstall, request: Request) -> dict[str, Any]:
    return InstallOutputSerializer(install, context={"language": request.LANGUAGE_CODE}).data


class ModelInstallListApi(APIView):
    """The user's install requests, newest first, with where each stands."""

    @extend_schema(operation_id="models_installs_list", parameters=[LANG_PARAMETER],
                   responses=InstallOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        installs = selectors.model_install_list(user=request.user)
        return Response(InstallOutputSerializer(installs, many=True, context={"language": request.LANGUAGE_CODE}).data)


class ModelInstallCreateApi(APIView):
    """Install a model from the Hugging Face Hub (``source: hub``, ``reference``: its id) or
    from a folder on the server (``source: folder``, administrators only). The install runs in
    the background; ``ws/models/`` streams its progress."""

    @extend_schema_serializer(component_name="ModelInstallRequest")
    class InputSerializer(serializers.Serializer):
        source = serializers.ChoiceField(choices=[ModelInstall.Source.HUB, ModelInstall.Source.FOLDER])
        reference = serializers.CharField(max_length=500,
                                          help_text="A hub id (cross-encoder/ms-marco-MiniLM-L-6-v2) or a path.")
        kind = serializers.ChoiceField(choices=INSTALLABLE_KINDS)
        name = serializers.CharField(max_length=100, required=False, allow_blank=True, default="",
                                     help_text="What pipelines will name it; defaults to the id's last part.")
        revision = serializers.CharField(max_length=100, required=False, allow_blank=True, default="",
                                         help_text="Hub installs: a branch, tag or commit (default main).")
        copy = serializers.BooleanField(required=False, default=False,
                                        help_text="Folder installs: copy the files instead of using them in place.")

    @extend_schema(operation_id="models_installs_create", request=InputSerializer, parameters=[LANG_PARAMETER],
                   # 403 in the error shape: a folder install asked for by someone who is not an administrator.
                   responses={201: InstallOutputSerializer, **INVALID, 403: FieldErrorsSerializer})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        try:
            install = services.model_install_request(
                owner=request.user, source=data["source"], kind=data["kind"], reference=data["reference"],
                name=data["name"], revision=data["revision"], copy=data["copy"])
        except ConfigValidationError as exc:
            forbidden = any(error.code == "forbidden" for error in exc.errors)
            return errors_response(config_errors(exc, request.LANGUAGE_CODE), 403 if forbidden else 400)
        return Response(_install_data(install, request), status=status.HTTP_201_CREATED)


class ModelInstallUploadApi(APIView):
    """Install a model from an uploaded ``.zip`` of its folder (as ``save_pretrained`` or
    sentence-transformers' ``save`` writes it, safetensors weights). The archive is checked at
    once; extracting it and the load check run in the background."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="ModelInstallUpload")
    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="The zip archive of the model folder.")
        kind = serializers.ChoiceField(choices=INSTALLABLE_KINDS)
        name = serializers.CharField(max_length=100, required=False, allow_blank=True, default="",
                                     help_text="Defaults to the file's name without .zip.")

    @extend_schema(operation_id="models_installs_upload", request={"multipart/form-data": InputSerializer},
                   parameters=[LANG_PARAMETER], responses={201: InstallOutputSerializer, **INVALID})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        install = services.model_install_upload(owner=request.user, kind=data["kind"], upload=data["file"],
                                                name=data["name"])
        return Response(_install_data(install, request), status=status.HTTP_201_CREATED)


class ModelInstallDetailApi(APIView):
    """One install request and where it stands."""

    @extend_schema(operation_id="models_installs_retrieve", parameters=[LANG_PARAMETER],
                   responses=InstallOutputSerializer)
    def get(self, request: Request, install_id: int) -> Response:
        return Response(_install_data(_install(request, install_id), request))


def _install(request: Request, install_id: int) -> ModelInstall:
    """The caller's install: another user's is a 404, the same as none."""
    return get_for_owner(selectors.model_install_get, user=request.user, install_id=install_id)


def _refused(exc: ConfigValidationError, request: Request) -> Response:
    """409 for an install in the wrong state, 403 for a right lost since, else 400."""
    codes = {error.code for error in exc.errors}
    code = 409 if "not_failed" in codes else 403 if "forbidden" in codes else 400
    return errors_response(config_errors(exc, request.LANGUAGE_CODE), code)


class ModelInstallRetryApi(APIView):
    """Queue a failed install again from the same source (hub id and revision, the uploaded
    archive, or the folder), under the same name; 409 for an install that has not failed."""

    @extend_schema(operation_id="models_installs_retry", request=None, parameters=[LANG_PARAMETER],
                   responses={202: InstallOutputSerializer, **INVALID, 403: FieldErrorsSerializer,
                              409: FieldErrorsSerializer})
    def post(self, request: Request, install_id: int) -> Response:
        try:
            install = services.model_install_retry(install=_install(request, install_id))
        except ConfigValidationError as exc:
            return _refused(exc, request)
        return Response(_install_data(install, request), status=status.HTTP_202_ACCEPTED)


class ModelInstallDeleteApi(APIView):
    """Remove a failed install from the list, with the uploaded archive or the partial download
    it kept; 409 for an install that has not failed. Installed models are removed with
    ``DELETE models/installed/<name>/``."""

    @extend_schema(operation_id="models_installs_destroy", parameters=[LANG_PARAMETER],
                   responses={204: None, 409: FieldErrorsSerializer})
    def delete(self, request: Request, install_id: int) -> Response:
        try:
            services.model_install_delete(install=_install(request, install_id))
        except ConfigValidationError as exc:
            return _refused(exc, request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ModelRemoveApi(APIView):
    """Remove an installed model: administrators any, a user their own private models;
    packaged models cannot be removed."""

    @extend_schema(operation_id="models_installed_destroy", parameters=[LANG_PARAMETER],
                   responses={204: None, **INVALID, 403: FieldErrorsSerializer})
    def delete(self, request: Request, name: str) -> Response:
        try:
            services.model_remove(name=name, user=request.user)
        except ConfigValidationError as exc:
            if any(error.code == "not_installed" for error in exc.errors):
                raise Http404 from None
            forbidden = any(error.code == "forbidden" for error in exc.errors)
            return errors_response(config_errors(exc, request.LANGUAGE_CODE), 403 if forbidden else 400)
        return Response(status=status.HTTP_204_NO_CONTENT)
