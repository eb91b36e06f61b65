"""``--inject`` inside the worker: matching botocore calls fail (or wait) as the service would.

Loaded by the worker, by file path, only when ``CFNRUN_INJECT`` is set, so it may use botocore
(the provider's own copy) but nothing of cfnrun. It adds one ``before-call`` handler to the
handlers every new botocore session registers, so the caller and provider SessionProxy and
any client the handler builds itself are all covered. An injected error is answered in place
of the request: botocore raises the same ``ClientError`` (the service's modelled exception
class where there is one) it would raise for that answer from the wire, and its own retries
never see it, so ``@1`` fails exactly one API call of the handler. Calls are counted per rule,
in this worker process.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from botocore import handlers
from botocore.awsrequest import AWSResponse


class FaultRules:
    def __init__(self, rules: List[Dict[str, Any]]) -> None:
        self.rules = rules
        self._calls = [0] * len(rules)
        self._fired: List[Dict[str, Any]] = []
        self._lock = threading.Lock()

    def _matches(self, rule: Dict[str, Any], service_names: Tuple[str, ...], operation: str) -> bool:
        return rule["service"] in service_names and rule["operation"] in ("*", operation)

    def _chosen(self, index: int, rule: Dict[str, Any]) -> Optional[int]:
        """The call's number for this rule when the rule applies to it, else None."""
        with self._lock:
            self._calls[index] += 1
            call = self._calls[index]
        if rule["nth"] is not None and call != rule["nth"]:
            return None
        if rule["rate"] is not None and random.random() >= rule["rate"]:
            return None
        return call

    def before_call(self, model: Any, **kwargs: Any) -> Optional[Tuple[AWSResponse, Dict[str, Any]]]:
        service = model.service_model
        names = (service.service_name.lower(), service.service_id.hyphenize().lower())
        for index, rule in enumerate(self.rules):
            if not self._matches(rule, names, model.name):
                continue
            call = self._chosen(index, rule)
            if call is None:
                continue
            self._record(rule, f"{names[0]}:{model.name}", call)
            if rule["delay_s"]:
                time.sleep(rule["delay_s"])
            if rule["error_code"]:
                return _error_answer(rule["error_code"], rule["status"], model.name)
        return None

    def _record(self, rule: Dict[str, Any], call_name: str, call: int) -> None:
        with self._lock:
            self._fired.append({"rule": rule["text"], "call": call_name, "count": call, "status": rule["status"]})

    def uninstall(self) -> None:
        """Leave sessions created from now on alone (--in-process, when the command ends)."""
        if ("before-call", self.before_call) in handlers.BUILTIN_HANDLERS:
            handlers.BUILTIN_HANDLERS.remove(("before-call", self.before_call))

    def drain(self) -> List[Dict[str, Any]]:
        """The faults that fired since the last drain."""
        with self._lock:
            fired, self._fired = self._fired, []
        return fired


def _error_answer(code: str, status: int, operation: str) -> Tuple[AWSResponse, Dict[str, Any]]:
    request_id = "cfnrun-injected-" + format(random.getrandbits(48), "012x")
    http = AWSResponse("https://cfnrun.invalid/injected", status, {"x-amzn-requestid": request_id}, None)
    parsed = {
        "Error": {"Code": code, "Message": f"injected by cfnrun --inject into {operation}"},
        "ResponseMetadata": {"RequestId": request_id, "HTTPStatusCode": status, "HTTPHeaders": {}, "RetryAttempts": 0},
    }
    return http, parsed


def install(rules: List[Dict[str, Any]]) -> FaultRules:
    """Put the rules in front of every botocore session created from now on."""
    faults = FaultRules(rules)
    handlers.BUILTIN_HANDLERS.append(("before-call", faults.before_call))
    return faults
