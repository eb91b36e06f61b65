"""The IaC generator's resource scans: each served type's LIST, its resources by primaryIdentifier, kept in memory.

StartResourceScan answers the scan's ARN at once; the LISTs run in the background, one type after the
other (``PercentageCompleted`` moves on as each ends), through the ``TypeLister`` the app gives (the one
invoker: budgets, contract checks, history). A resource is named by its primaryIdentifier properties
(``ResourceIdentifier``) and is ``ManagedByStack`` when a local stack's record holds it as the scan
ends. With ``--state`` a scan is kept once it ends (``state_db.py``) and listed again after a restart. What botocore's model documents (cloudformation 2010-05-15): the statuses, one scan in progress at a
time per account and Region, ``ScanFilters`` Types with an asterisk only at the end, FULL and PARTIAL
scans, ListResourceScans newest first (10 by default, FULL ones unless ScanTypeFilter says PARTIAL), a scan
that expires (the user guide: after 30 days). Inferred: the refusals' texts, a scan FAILED when a LIST
failed (its StatusReason names each, the others' resources still listed), ResourcesRead counting the models
the LISTs returned, and no daily quota (a local serve has none to protect).
"""
from __future__ import annotations

import re
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Protocol, Sequence, Set, Tuple

from cfnrun.model.schema import ResourceSchema
from cfnrun.stacks.background import BackgroundTasks
from cfnrun.stacks.store import StackError, StackStore

IN_PROGRESS, COMPLETE, FAILED, EXPIRED = "IN_PROGRESS", "COMPLETE", "FAILED", "EXPIRED"
FULL, PARTIAL = "FULL", "PARTIAL"
SCAN_LIFETIME_S = 30 * 24 * 3600  # the user guide: a scan expires after 30 days
KIND = "resource_scan"  # its rows in the state database
MAX_REASON = 256  # no longer StatusReason is worth showing; the console has the whole message
TYPE_FILTER = re.compile(r"[A-Za-z0-9]+(::[A-Za-z0-9]+){0,2}(::\*|\*)?|\*")


class ListFailed(Exception):
    """A type's LIST ended without SUCCESS; the message says how, in the handler's words."""


@dataclass(frozen=True)
class Listed:
    """One model a LIST returned: its primaryIdentifier properties (as text) and its properties, writeOnly ones left out."""

    identifier: Dict[str, str]
    properties: Dict[str, Any]


class TypeLister(Protocol):
    """What a scan runs: the served resource types' LIST handlers (the app's ``IacGenerator``)."""

    def scannable(self) -> List[str]: ...

    def schema(self, type_name: str) -> Optional[ResourceSchema]: ...

    async def list(self, type_name: str) -> List[Listed]: ...


@dataclass
class ScannedResource:
    resource_type: str
    identifier: Dict[str, str]
    managed: bool
    properties: Dict[str, Any]

    def shape(self) -> Dict[str, Any]:
        return {"ResourceType": self.resource_type, "ResourceIdentifier": dict(self.identifier), "ManagedByStack": self.managed}


@dataclass
class ResourceScan:
    scan_id: str  # its ARN
    type_filters: Optional[List[str]]  # ScanFilters' Types; None for a full scan
    start_time: float
    status: str = IN_PROGRESS
    reason: Optional[str] = None
    end_time: Optional[float] = None
    percentage: float = 0.0
    resource_types: List[str] = field(default_factory=list)
    resources: List[ScannedResource] = field(default_factory=list)

    @property
    def scan_type(self) -> str:
        return PARTIAL if self.type_filters is not None else FULL

    def current_status(self, now: float) -> str:
        return EXPIRED if self.status != IN_PROGRESS and now > self.start_time + SCAN_LIFETIME_S else self.status

    def summary(self, now: float) -> Dict[str, Any]:
        return {
            "ResourceScanId": self.scan_id, "Status": self.current_status(now), "StatusReason": self.reason, "StartTime": self.start_time,
            "EndTime": self.end_time, "PercentageCompleted": self.percentage, "ScanType": self.scan_type,
        }

    def description(self, now: float) -> Dict[str, Any]:
        described = {key: value for key, value in self.summary(now).items() if key != "ScanType"}
        if self.status != IN_PROGRESS:
            described.update(ResourceTypes=list(self.resource_types), ResourcesScanned=len(self.resources), ResourcesRead=len(self.resources))
        if self.type_filters is not None:
            described["ScanFilters"] = [{"Types": list(self.type_filters)}]
        return described


def checked_type_filters(scan_filters: Optional[Sequence[Dict[str, Any]]]) -> Optional[List[str]]:
    """ScanFilters' Types, each a type name or a prefix ending in an asterisk; None when none are given (a full scan)."""
    if not scan_filters:
        return None
    types = [str(name) for scan_filter in scan_filters for name in (scan_filter.get("Types") or [])]
    for name in types:
        if not TYPE_FILTER.fullmatch(name):
            raise StackError(
                f"Resource type filter [{name}] is not valid: name a type as Organization::Service::Resource, "
                "or end it with an asterisk (AWS::S3::*) to scan every type that starts so"
            )
    return types


def matches(type_name: str, type_filters: Optional[Sequence[str]]) -> bool:
    if type_filters is None:
        return True
    return any(type_name == f or (f.endswith("*") and type_name.startswith(f[:-1])) for f in type_filters)


def managed_resources(store: StackStore) -> Set[Tuple[str, str]]:
    """(type, physical id) of every resource a local stack's record holds."""
    return {
        (resource.type_name, resource.physical_id)
        for stack in store.stacks.values() if stack.status != "DELETE_COMPLETE"
        for resource in stack.resources.values() if resource.exists and resource.physical_id is not None
    }


def physical_id(identifier: Dict[str, str]) -> str:
    """The physical id a stack gives a resource so identified: its primaryIdentifier values joined by ``|``."""
    return "|".join(identifier.values())


class ResourceScans:
    """This serve's resource scans, newest last: in memory, and with ``--state`` in its database once each ends."""

    def __init__(self, store: StackStore, lister: TypeLister) -> None:
        self.store = store
        self.lister = lister
        self.scans: Dict[str, ResourceScan] = {}
        self._tokens: Dict[str, str] = {}  # ClientRequestToken → the scan it started
        self._tasks = BackgroundTasks()

    def start(self, type_filters: Optional[List[str]], client_request_token: Optional[str]) -> ResourceScan:
        if client_request_token is not None and client_request_token in self._tokens:
            return self.scans[self._tokens[client_request_token]]
        running = next((s for s in self.scans.values() if s.status == IN_PROGRESS), None)
        if running is not None:
            raise StackError(
                f"A resource scan is already in progress ({running.scan_id}): only one runs at a time in an account and Region",
                "ResourceScanInProgress",
            )
        engine = self.store.engine
        scan = ResourceScan(f"arn:aws:cloudformation:{engine.region}:{engine.account_id}:resourceScan/{uuid.uuid4()}", type_filters, time.time())
        self.scans[scan.scan_id] = scan
        if client_request_token is not None:
            self._tokens[client_request_token] = scan.scan_id
        self._tasks.start(self._run(scan))
        return scan

    async def _run(self, scan: ResourceScan) -> None:
        types = [t for t in self.lister.scannable() if matches(t, scan.type_filters)]
        failures: List[str] = []
        try:
            for done, type_name in enumerate(types, start=1):
                try:
                    listed = await self.lister.list(type_name)
                except ListFailed as failed:
                    failures.append(f"LIST of {type_name} failed: {failed}")
                    listed = []
                managed = managed_resources(self.store)
                scan.resources += [ScannedResource(type_name, r.identifier, (type_name, physical_id(r.identifier)) in managed, r.properties)
                                   for r in listed]
                scan.resource_types.append(type_name)
                scan.percentage = round(100.0 * done / len(types), 1)
        except Exception as error:  # noqa: B902 - a scan never stays IN_PROGRESS because cfnrun failed
            failures.append(f"cfnrun failed scanning: {type(error).__name__}: {error}")
        scan.percentage = 100.0
        scan.status = FAILED if failures else COMPLETE
        scan.reason = "; ".join(failures)[:MAX_REASON] if failures else None
        scan.end_time = time.time()
        if self.store.database is not None:
            self.store.database.put_generated(KIND, scan.scan_id, asdict(scan))

    def restore(self) -> None:
        """The scans ``--state`` keeps, after the stacks are read back."""
        if self.store.database is None:
            return
        for record in self.store.database.generated(KIND):
            resources = [ScannedResource(**resource) for resource in record.pop("resources")]
            scan = ResourceScan(**record, resources=resources)
            self.scans[scan.scan_id] = scan

    def get(self, scan_id: str) -> ResourceScan:
        scan = self.scans.get(scan_id)
        if scan is None:
            raise StackError(f"Resource scan [{scan_id}] not found", "ResourceScanNotFound")
        return scan

    def finished(self, scan_id: str) -> ResourceScan:
        """A scan whose resources can be listed: refused while it is in progress."""
        scan = self.get(scan_id)
        if scan.status == IN_PROGRESS:
            raise StackError(f"Resource scan [{scan_id}] is still in progress: list its resources once it is COMPLETE", "ResourceScanInProgress")
        return scan

    def newest_first(self, scan_type: str) -> List[ResourceScan]:
        return [s for s in reversed(list(self.scans.values())) if s.scan_type == scan_type]

    async def close(self, timeout_s: float) -> None:
        """On stop: scans in flight get ``timeout_s`` to finish, then they are cancelled."""
        await self._tasks.close(timeout_s)
