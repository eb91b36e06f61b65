"""A stack of stabilizing resources: create, update and delete wall time against the stack's critical path.

Usage: python bench/stacks.py [--delay SECONDS] [--runs N]

Serves a private copy of the cluster sample (each create, update and delete answers IN_PROGRESS
twice, ``--delay`` seconds apart, before SUCCESS) with ``cfnrun serve``, and drives a six-cluster
stack through serve's CloudFormation API with boto3, as a user's script would:

    A      B      F          A, B, F start at once; C waits for A; D for A and B;
    |  \\  |                  E for C (through a Sub of C's ClusterId in its Name)
    C    D
    |
    E

Each operation's **wall time** runs from the API call to the DescribeStacks poll (every 20 ms)
that sees it complete. Its **critical path** comes from the same operation's stack events: each
resource's time is its ``*_IN_PROGRESS`` to ``*_COMPLETE`` (its handler calls and the waits
between them), and the critical path is the longest sum of those along a dependency chain
(reversed for delete), so the ratio is what the stack engine adds on top of the handlers it had
to wait for: start-up (reading and linting the template), starting a dependant after its
dependencies end, the events and the final status. The goal is at most 1.2×.

Then the same stack on ``serve --virtual-clock``, whose callbacks do not wait: the whole
create, update and delete should take about a second each or less.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import boto3
from benchlib import LOCAL_STATE, ROOT, Serve
from botocore.config import Config

# logical id → the clusters it depends on
DEPENDS_ON: Dict[str, List[str]] = {"A": [], "B": [], "F": [], "C": ["A"], "D": ["A", "B"], "E": ["C"]}
POLL_SECONDS = 0.02


def stack_template() -> str:
    resources: Dict[str, Any] = {}
    for logical_id, needs in DEPENDS_ON.items():
        name: Any = {"Fn::Sub": f"${{AWS::StackName}}-{logical_id.lower()}"}
        resource: Dict[str, Any] = {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": name, "NodeCount": {"Ref": "Nodes"}}}
        if logical_id == "E":
            resource["Properties"]["Name"] = {"Fn::Sub": "e-of-${C}"}
        elif needs:
            resource["DependsOn"] = needs
        resources[logical_id] = resource
    return json.dumps({"Parameters": {"Nodes": {"Type": "Number", "Default": 1}}, "Resources": resources})


def until_done(client: Any, name: str, start: Any, done: str) -> float:
    """Seconds from calling ``start`` to the DescribeStacks that shows ``done``."""
    started = time.perf_counter()
    start()
    while True:
        stacks = client.describe_stacks(StackName=name)["Stacks"]
        status = stacks[0]["StackStatus"]
        if status == done:
            return time.perf_counter() - started
        if not status.endswith("_IN_PROGRESS"):
            raise SystemExit(f"{name}: {status} ({stacks[0].get('StackStatusReason')})")
        time.sleep(POLL_SECONDS)


def resource_seconds(events: Sequence[Dict[str, Any]], action: str) -> Dict[str, float]:
    """Each resource's *_IN_PROGRESS → *_COMPLETE of one operation, from its stack events (oldest first)."""
    began: Dict[str, float] = {}
    took: Dict[str, float] = {}
    for event in events:
        logical_id, status = event["LogicalResourceId"], event["ResourceStatus"]
        if logical_id not in DEPENDS_ON:
            continue
        if status == f"{action}_IN_PROGRESS":
            began.setdefault(logical_id, event["Timestamp"].timestamp())
        elif status == f"{action}_COMPLETE":
            took[logical_id] = event["Timestamp"].timestamp() - began[logical_id]
    return took


def critical_path(took: Dict[str, float], reverse: bool) -> float:
    """The longest sum of resource times along a dependency chain (dependants first when ``reverse``)."""
    waits_for = {
        logical_id: [other for other, needs in DEPENDS_ON.items() if logical_id in needs] if reverse else DEPENDS_ON[logical_id]
        for logical_id in DEPENDS_ON
    }
    finish: Dict[str, float] = {}

    def ends(logical_id: str) -> float:
        if logical_id not in finish:
            finish[logical_id] = took[logical_id] + max((ends(other) for other in waits_for[logical_id]), default=0.0)
        return finish[logical_id]

    return max(ends(logical_id) for logical_id in DEPENDS_ON)


def lifecycle(url: str, name: str) -> List[Tuple[str, float, float]]:
    """(operation, wall seconds, critical-path seconds) for create, update and delete of one stack."""
    client = boto3.client(
        "cloudformation",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="AKIDCFNRUNBENCH",
        aws_secret_access_key="cfnrun-bench",
        config=Config(retries={"max_attempts": 0}),
    )
    body = stack_template()
    steps = [
        ("create", "CREATE", lambda: client.create_stack(StackName=name, TemplateBody=body), "CREATE_COMPLETE"),
        (
            "update",
            "UPDATE",
            lambda: client.update_stack(StackName=name, TemplateBody=body, Parameters=[{"ParameterKey": "Nodes", "ParameterValue": "2"}]),
            "UPDATE_COMPLETE",
        ),
    ]
    results = []
    stack_id = ""
    for label, action, start, done in steps:
        seen = len(client.describe_stack_events(StackName=name)["StackEvents"]) if stack_id else 0
        wall = until_done(client, name, start, done)
        stack_id = client.describe_stacks(StackName=name)["Stacks"][0]["StackId"]
        events = list(reversed(client.describe_stack_events(StackName=name)["StackEvents"]))[seen:]
        results.append((label, wall, critical_path(resource_seconds(events, action), reverse=False)))
    seen = len(client.describe_stack_events(StackName=stack_id)["StackEvents"])
    wall = until_done(client, stack_id, lambda: client.delete_stack(StackName=name), "DELETE_COMPLETE")
    events = list(reversed(client.describe_stack_events(StackName=stack_id)["StackEvents"]))[seen:]
    results.append(("delete", wall, critical_path(resource_seconds(events, "DELETE"), reverse=True)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=int, default=1, help="the clusters' CallbackDelaySeconds")
    parser.add_argument("--runs", type=int, default=3, help="stacks created, updated and deleted one after another")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cfnrun-stack-bench-"))
    project = work / "cluster"
    shutil.copytree(ROOT / "samples" / "cluster", project, ignore=LOCAL_STATE)
    sam = project / "template.yml"
    sam.write_text(sam.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', f'CALLBACK_DELAY_SECONDS: "{args.delay}"'))
    try:
        server = Serve(project, env=os.environ.copy())
        try:
            lifecycle(server.url, "warm-up")  # cfn-lint's first load and the workers' first calls are not what is measured
            rows = [row for run in range(args.runs) for row in lifecycle(server.url, f"bench-{run}")]
        finally:
            server.stop()
        print(f"six stabilizing clusters (3 levels deep), CallbackDelaySeconds {args.delay}, {args.runs} runs; seconds")
        print(f"{'operation':<10}{'wall p50':>10}{'critical path p50':>19}{'ratio p50':>11}{'ratio max':>11}")
        for label in ("create", "update", "delete"):
            mine = [row for row in rows if row[0] == label]
            ratios = [wall / path for _, wall, path in mine]
            wall_p50 = statistics.median(wall for _, wall, _ in mine)
            path_p50 = statistics.median(path for _, _, path in mine)
            print(f"{label:<10}{wall_p50:>10.2f}{path_p50:>19.2f}{statistics.median(ratios):>10.2f}×{max(ratios):>10.2f}×")

        server = Serve(project, "--virtual-clock", env=os.environ.copy())
        try:
            lifecycle(server.url, "warm-up")
            virtual = [row for run in range(args.runs) for row in lifecycle(server.url, f"virtual-{run}")]
        finally:
            server.stop()
        print(f"the same stack on serve --virtual-clock, {args.runs} runs; wall seconds")
        for label in ("create", "update", "delete"):
            walls = [wall for name, wall, _ in virtual if name == label]
            print(f"{label:<10} p50 {statistics.median(walls):.2f}   max {max(walls):.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
