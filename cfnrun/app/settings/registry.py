"""``cfnrun registry``'s options: which serve to ask, and what to remove."""
from dataclasses import dataclass
from typing import Optional

from cfnrun.app.options import argument, option
from cfnrun.app.settings.serve import DEFAULT_HOST, DEFAULT_PORT

DEFAULT_ENDPOINT = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
ENDPOINT_HELP = "The cfnrun serve whose registry to read (its CloudFormation API)."


@dataclass(frozen=True)
class RegistryListOptions:
    endpoint: str = option("--endpoint", help=ENDPOINT_HELP, default=DEFAULT_ENDPOINT)


@dataclass(frozen=True)
class RegistryRemoveOptions:
    type_name: str = argument("The registered type's name, e.g. Org::Svc::Thing.", default="", show_default=False)
    kind: str = option("--type", help="RESOURCE, HOOK or MODULE.", default="RESOURCE")
    version_id: Optional[str] = option("--version-id", help="Remove this version only (default: every version, then the type).")
    endpoint: str = option("--endpoint", help=ENDPOINT_HELP, default=DEFAULT_ENDPOINT)
