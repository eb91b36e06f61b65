"""botocore's model of the CloudFormation API, loaded once, when the first request needs it.

The model is what boto3 and the aws CLI serialise requests and parse answers with, so reading
and writing by it keeps the two sides in step without a hand-written copy of 90 operations.
botocore itself is imported here, on that first request, so serve starts as fast without it.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, FrozenSet, Optional

if TYPE_CHECKING:
    from botocore.model import OperationModel, ServiceModel

SERVICE = "cloudformation"
API_VERSION = "2010-05-15"
NAMESPACE = "http://cloudformation.amazonaws.com/doc/2010-05-15/"


@functools.lru_cache(maxsize=1)
def service_model() -> "ServiceModel":
    from botocore.loaders import create_loader
    from botocore.model import ServiceModel

    description = create_loader().load_service_model(SERVICE, "service-2", API_VERSION)
    return ServiceModel(description, SERVICE)


@functools.lru_cache(maxsize=1)
def operation_names() -> FrozenSet[str]:
    return frozenset(service_model().operation_names)


def operation_model(name: str) -> "Optional[OperationModel]":
    """The model of operation ``name``, or None when CloudFormation has no such operation."""
    if name not in operation_names():
        return None
    return service_model().operation_model(name)
