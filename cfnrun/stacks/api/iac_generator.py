"""The IaC generator's operations: resource scans (``resource_scans.py``) and generated templates (``generated_templates.py``).

Input and output members are botocore's (cloudformation 2010-05-15), a member left None is left out of the answer;
page sizes are the model's defaults (ListResourceScans 10, ListGeneratedTemplates 50, the resource lists 100; 100 at most).
"""
from __future__ import annotations

import time
from typing import Any, Awaitable, Callable, Dict, List, Protocol

from cfnrun.stacks.api.inputs import one_page
from cfnrun.stacks.generated_templates import GeneratedTemplates
from cfnrun.stacks.related_resources import related
from cfnrun.stacks.resource_scans import FULL, ResourceScans, ScannedResource, checked_type_filters
from cfnrun.stacks.store import StackError

Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]
MAX_PAGE = 100


class IacGeneratorService(Protocol):
    """The scans and templates of one serve (the app's ``IacGenerator``, which runs their LISTs and READs)."""

    scans: ResourceScans
    templates: GeneratedTemplates


def _page_size(params: Dict[str, Any], default: int) -> int:
    size = params.get("MaxResults")
    if size is None:
        return default
    if not 1 <= int(size) <= MAX_PAGE:
        raise StackError(f"1 validation error detected: Value '{size}' at 'maxResults' failed to satisfy constraint: "
                         f"Member must have value between 1 and {MAX_PAGE}")
    return int(size)


def _tags(properties: Dict[str, Any]) -> Dict[str, str]:
    """A model's tags, as a list of Key/Value pairs or a map (the two shapes schemas give them)."""
    tags = properties.get("Tags")
    if isinstance(tags, dict):
        return {str(k): str(v) for k, v in tags.items()}
    if isinstance(tags, list):
        return {str(t.get("Key")): str(t.get("Value")) for t in tags if isinstance(t, dict) and "Key" in t}
    return {}


def _wanted(resource: ScannedResource, params: Dict[str, Any]) -> bool:
    """ListResourceScanResources' filters, all of which must match."""
    tags = _tags(resource.properties)
    checks = (
        ("ResourceIdentifier", lambda v: v in resource.identifier.values()),
        ("ResourceTypePrefix", lambda v: resource.resource_type.startswith(v)),
        ("TagKey", lambda v: v in tags),
        ("TagValue", lambda v: v in tags.values()),
    )
    return all(check(params[name]) for name, check in checks if params.get(name) is not None)


class IacGeneratorOperations:
    """The IaC generator's operations, by name (``StackOperations`` answers them)."""

    def __init__(self, generator: IacGeneratorService) -> None:
        self.scans = generator.scans
        self.templates = generator.templates

    def operations(self) -> Dict[str, Operation]:
        return {
            "StartResourceScan": self.start_resource_scan,
            "DescribeResourceScan": self.describe_resource_scan,
            "ListResourceScans": self.list_resource_scans,
            "ListResourceScanResources": self.list_resource_scan_resources,
            "ListResourceScanRelatedResources": self.list_resource_scan_related_resources,
            "CreateGeneratedTemplate": self.create_generated_template,
            "DescribeGeneratedTemplate": self.describe_generated_template,
            "GetGeneratedTemplate": self.get_generated_template,
            "ListGeneratedTemplates": self.list_generated_templates,
            "UpdateGeneratedTemplate": self.update_generated_template,
            "DeleteGeneratedTemplate": self.delete_generated_template,
        }

    # -- resource scans --------------------------------------------------------------------

    async def start_resource_scan(self, params: Dict[str, Any]) -> Dict[str, Any]:
        scan = self.scans.start(checked_type_filters(params.get("ScanFilters")), params.get("ClientRequestToken"))
        return {"ResourceScanId": scan.scan_id}

    async def describe_resource_scan(self, params: Dict[str, Any]) -> Dict[str, Any]:
        return self.scans.get(params["ResourceScanId"]).description(time.time())

    async def list_resource_scans(self, params: Dict[str, Any]) -> Dict[str, Any]:
        scans = self.scans.newest_first(params.get("ScanTypeFilter") or FULL)
        page, token = one_page(scans, params, _page_size(params, 10))
        now = time.time()
        return {"ResourceScanSummaries": [s.summary(now) for s in page], "NextToken": token}

    async def list_resource_scan_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        scan = self.scans.finished(params["ResourceScanId"])
        matching = [r for r in scan.resources if _wanted(r, params)]
        page, token = one_page(matching, params, _page_size(params, MAX_PAGE))
        return {"Resources": [r.shape() for r in page], "NextToken": token}

    async def list_resource_scan_related_resources(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """The scanned resources the given ones relate to through their schemas' relationshipRef (``related_resources.py``)."""
        scan = self.scans.finished(params["ResourceScanId"])
        given: List[Dict[str, Any]] = params["Resources"]
        if len(given) > MAX_PAGE:
            raise StackError(f"Up to {MAX_PAGE} resources can be given; got {len(given)}")
        scanned = {(r.resource_type, tuple(sorted(r.identifier.items()))): r for r in scan.resources}
        found = []
        for resource in given:
            key = (resource["ResourceType"], tuple(sorted((str(k), str(v)) for k, v in resource["ResourceIdentifier"].items())))
            if key not in scanned:
                raise StackError(f"Resource {key[0]} {dict(key[1])} is not in resource scan [{scan.scan_id}]")
            found.append(scanned[key])
        page, token = one_page(related(scan.resources, found, self.scans.lister.schema), params, _page_size(params, MAX_PAGE))
        return {"RelatedResources": [r.shape() for r in page], "NextToken": token}

    # -- generated templates ---------------------------------------------------------------

    async def create_generated_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        template = self.templates.create(
            params["GeneratedTemplateName"], params.get("Resources") or [], params.get("StackName"), params.get("TemplateConfiguration")
        )
        return {"GeneratedTemplateId": template.template_id}

    async def describe_generated_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        return self.templates.get(params["GeneratedTemplateName"]).description()

    async def get_generated_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        template = self.templates.get(params["GeneratedTemplateName"])
        return {"Status": template.status, "TemplateBody": template.body(params.get("Format") or "JSON")}

    async def list_generated_templates(self, params: Dict[str, Any]) -> Dict[str, Any]:
        templates = sorted(self.templates.templates.values(), key=lambda t: t.creation_time, reverse=True)
        page, token = one_page(templates, params, _page_size(params, 50))
        return {"Summaries": [t.summary() for t in page], "NextToken": token}

    async def update_generated_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        return {"GeneratedTemplateId": self.templates.update(params["GeneratedTemplateName"], params).template_id}

    async def delete_generated_template(self, params: Dict[str, Any]) -> Dict[str, Any]:
        self.templates.delete(params["GeneratedTemplateName"])
        return {}
