"""The component core: multilingual texts, parameters, the registry, validation and the factory."""

from .component import ConfigObject, CredentialResolver, ParamsT, RegistryVocabulary
from .errors import (
    ConfigValidationError,
    CredentialError,
    FieldError,
    Problem,
    ReadableError,
    RegistryError,
    TrellisError,
    UnknownComponentError,
    install_model_action,
    readable_error,
)
from .factory import build, prepare
from .multilingual import LANGUAGES, MultilingualString, ml, normalize_language
from .params import ComponentRef, Params, Slot, children_param, component_param, component_slots, param, ref
from .registry import KINDS, Registry, register, registry
from .representation import Vocabulary
from .representation import render as render_representation
from .schema import localize_schema, multilingual_schema
from .tree import credential_references, iter_nodes
from .validation import validate_or_raise, validate_params, validate_tree

__all__ = [
    "KINDS",
    "LANGUAGES",
    "ComponentRef",
    "ConfigObject",
    "ConfigValidationError",
    "CredentialError",
    "CredentialResolver",
    "FieldError",
    "MultilingualString",
    "Params",
    "ParamsT",
    "Problem",
    "ReadableError",
    "Registry",
    "RegistryVocabulary",
    "RegistryError",
    "Slot",
    "TrellisError",
    "UnknownComponentError",
    "Vocabulary",
    "install_model_action",
    "build",
    "children_param",
    "component_param",
    "component_slots",
    "credential_references",
    "iter_nodes",
    "localize_schema",
    "ml",
    "multilingual_schema",
    "normalize_language",
    "param",
    "prepare",
    "readable_error",
    "ref",
    "register",
    "registry",
    "render_representation",
    "validate_or_raise",
    "validate_params",
    "validate_tree",
]
