"""The ``--state`` store's cost per event: a 5-resource create with 1,000 finished stacks kept, against an empty store.

Usage: python bench/state_store.py [--kept N] [--runs N]

Serves a private copy of the cluster sample with ``cfnrun serve --virtual-clock --state DIR``
(callbacks do not wait, so the stack engine and the store are what is timed) and creates a stack of
five clusters through serve's CloudFormation API with boto3, timed from the CreateStack call to the
DescribeStacks that sees CREATE_COMPLETE. First with an empty state folder, then with one holding
``--kept`` finished (deleted) stacks, each a copy of a real one this run created and deleted. The
goal: the second within 1.2× of the first (issue 31 item 6; the JSON file it replaced took 7.5×).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any, List

import boto3
from benchlib import LOCAL_STATE, ROOT, Serve
from stacks import until_done

from cfnrun.stacks.state_db import StateDatabase

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
FIVE = json.dumps(
    {"Resources": {f"C{n}": {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": {"Fn::Sub": f"${{AWS::StackName}}-{n}"}, "NodeCount": 1}} for n in range(5)}}
)


def creates(project: Path, state: Path, runs: int) -> List[float]:
    """Seconds each of ``runs`` creates took (after one warm-up create and delete)."""
    server = Serve(project, "--virtual-clock", "--state", str(state), env=os.environ.copy())
    try:
        client = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        until_done(client, "warm-up", lambda: client.create_stack(StackName="warm-up", TemplateBody=FIVE), "CREATE_COMPLETE")
        client.delete_stack(StackName="warm-up")
        client.get_waiter("stack_delete_complete").wait(StackName="warm-up", WaiterConfig={"Delay": 0.05, "MaxAttempts": 2000})
        took = []
        for run in range(runs):
            name = f"bench-{uuid.uuid4().hex[:8]}-{run}"
            took.append(until_done(client, name, lambda name=name: client.create_stack(StackName=name, TemplateBody=FIVE), "CREATE_COMPLETE"))
        return took
    finally:
        server.stop()


def fill(state: Path, kept: int) -> int:
    """Copy the finished stack ``state`` holds ``kept`` times (new ids); the size of the file made."""
    database = StateDatabase(state)
    database.open()
    try:
        [finished] = [r for r in database.records() if r["status"] == "DELETE_COMPLETE"][:1]
        for n in range(kept):
            copy: Any = json.loads(json.dumps(finished).replace(finished["stack_id"], f"{finished['stack_id']}-{n}"))
            database.put(copy)
    finally:
        database.close()
    return sum(p.stat().st_size for p in state.iterdir() if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kept", type=int, default=1000, help="finished stacks in the full store")
    parser.add_argument("--runs", type=int, default=3, help="creates timed on each store")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cfnrun-state-bench-"))
    project = work / "cluster"
    shutil.copytree(ROOT / "samples" / "cluster", project, ignore=LOCAL_STATE)
    try:
        empty = creates(project, work / "empty", args.runs)
        creates(project, work / "full", 1)  # a real stack, created and deleted (warm-up), to copy
        size = fill(work / "full", args.kept)
        full = creates(project, work / "full", args.runs)
        empty_p50, full_p50 = statistics.median(empty), statistics.median(full)
        print(f"5-resource create on serve --virtual-clock --state, {args.runs} runs; seconds (p50)")
        print(f"empty store:                       {empty_p50:.2f}")
        print(f"{args.kept} finished stacks ({size / 1e6:.1f} MB): {full_p50:.2f}")
        print(f"ratio:                             {full_p50 / empty_p50:.2f}×")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
