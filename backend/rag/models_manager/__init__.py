"""The model manager: the models this machine can run, and installing more on request.

Packaged models come inside Python packages (``MODELS.md``); installed ones live in a
``ModelStore`` folder, put there from the Hugging Face Hub (``huggingface_hub``, honouring
``HF_ENDPOINT``), from an uploaded ``.zip`` or from a local folder, each checked to load as
the kind it claims before it is offered. Nothing here runs unless asked: components resolve
installed names, they never download.
"""

from .archives import inspect_model_zip
from .checks import CROSS_ENCODER, EMBEDDING, INSTALLABLE_KINDS, KINDS, LLM, check_loads
from .errors import ModelInstallError
from .packaged import PACKAGED, enables, packaged_models
from .storage import (
    InstalledModel,
    ModelStore,
    Progress,
    Viewer,
    configure,
    current_viewer,
    default_name,
    default_root,
    name_problem,
    spelt_as_path,
    store,
    viewing_as,
)

__all__ = [
    "CROSS_ENCODER",
    "EMBEDDING",
    "INSTALLABLE_KINDS",
    "KINDS",
    "LLM",
    "PACKAGED",
    "InstalledModel",
    "ModelInstallError",
    "ModelStore",
    "Progress",
    "Viewer",
    "check_loads",
    "configure",
    "current_viewer",
    "default_name",
    "default_root",
    "enables",
    "inspect_model_zip",
    "name_problem",
    "packaged_models",
    "spelt_as_path",
    "store",
    "viewing_as",
]
