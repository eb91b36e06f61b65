"""Instructions per resource of a wide stack create, by process: a figure a busy machine does not move.

Usage: python bench/stack_instructions.py [--tree PATH] [--sizes 20,80] [--parts main,worker] [--layout wide|chain] [--poll-seconds 0.25]

- **main**: ``cfnrun serve --virtual-clock`` on the cluster sample under valgrind (callgrind, its
  main process only, every thread), creating a warm-up stack of 3 and then one of N independent clusters
  (``bench/run_all.py``'s stack-wide template; ``--layout chain``: N clusters each DependsOn the one
  before, its stack-chain template), for each N of ``--sizes``. Counting is on only from the second
  stack's CreateStack to the DescribeStacks that sees it complete (``callgrind_control``), so serve's
  start and the warm-up, whose cost a busy machine moves, are not counted. The slope between two
  sizes is the main process's instructions per resource: what is paid once per stack cancels out.
- **worker**: the cluster sample's CREATE (three handler calls: IN_PROGRESS twice, then SUCCESS)
  of N clusters one after another in one process, as a warm worker runs them (the support
  library's own entry point, the worker's shared botocore session work installed), under
  cachegrind. The slope is the workers' instructions per resource with the sample's store
  holding that many clusters (it grows with the stack).

``--tree`` measures another checkout (its cfnrun and its samples/cluster), to compare two.
Needs valgrind. Under valgrind what runs on a timer (the memory watch, a queued call's tick)
weighs more per resource than at full speed; compare these figures with each other.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import boto3
from benchlib import LOCAL_STATE, ROOT, USER_ENV, free_port
from botocore.config import Config

# cfnrun from ``tree``, not from the environment's (editable) install: its finder is dropped first.
RUN_TREE = (
    "import sys\n"
    "tree = sys.argv.pop(1)\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in (getattr(f, '__name__', '') or type(f).__module__).lower()]\n"
    "sys.path.insert(0, tree)\n"
    "sys.argv[0] = 'cfnrun'\n"
    "import cfnrun.__main__ as entry\n"
    "entry.main()\n"
)

WORKER_CALLS = r"""
import json, os, sys
tree, count = sys.argv[1], int(sys.argv[2])
sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in (getattr(f, '__name__', '') or type(f).__module__).lower()]
sys.path[:0] = [tree + '/samples/cluster/src', tree]
from cfnrun.runtime.worker import botocore_sessions
from cfnrun_sample_cluster.handlers import resource
botocore_sessions.share_registration_work()
botocore_sessions.prepare_sessions()
class Context:
    function_name, aws_request_id = 'TypeFunction', 'bench'
    def get_remaining_time_in_millis(self): return 60000
stack_id = 'arn:aws:cloudformation:us-east-1:123456789012:stack/wide/1'
for index in range(count):
    event = {
        'action': 'CREATE', 'awsAccountId': '123456789012', 'bearerToken': 'bench', 'region': 'us-east-1',
        'resourceType': 'Cfnrun::Sample::Cluster', 'stackId': stack_id, 'resourceTypeVersion': '00000001',
        'responseEndpoint': 'https://cloudformation.us-east-1.amazonaws.com',
        'requestData': {
            'callerCredentials': {'accessKeyId': 'AKIDCFNRUNBENCH', 'secretAccessKey': 'cfnrun-bench', 'sessionToken': ''},
            'resourceProperties': {'Name': f'wide-{index}', 'NodeCount': '1'}, 'logicalResourceId': f'C{index}',
            'stackTags': {}, 'systemTags': {'aws:cloudformation:stack-name': 'wide', 'aws:cloudformation:stack-id': stack_id},
        },
    }
    answer = resource(event, Context())
    while answer['status'] == 'IN_PROGRESS':
        event['callbackContext'] = answer['callbackContext']
        event['requestData']['resourceProperties'] = answer['resourceModel']
        answer = resource(event, Context())
    assert answer['status'] == 'SUCCESS', answer
"""

CACHEGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=no"]
CALLGRIND = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", "--trace-children=no"]
I_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def looped_clusters(count: int) -> str:
    cluster = {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": {"Fn::Sub": "${AWS::StackName}-${I}"}, "NodeCount": 1}}
    loop = ["I", [str(index) for index in range(count)], {"C${I}": cluster}]
    return json.dumps({"Transform": "AWS::LanguageExtensions", "Resources": {"Fn::ForEach::Clusters": loop}})


def chained_clusters(count: int) -> str:
    """``count`` clusters, each but the first DependsOn the one before (``bench/run_all.py``'s stack-chain)."""
    resources: Dict[str, Any] = {}
    for index in range(count):
        resource: Dict[str, Any] = {"Type": "Cfnrun::Sample::Cluster", "Properties": {"Name": {"Fn::Sub": f"${{AWS::StackName}}-{index}"}, "NodeCount": 1}}
        if index:
            resource["DependsOn"] = [f"C{index - 1}"]
        resources[f"C{index}"] = resource
    return json.dumps({"Resources": resources})


LAYOUTS: Dict[str, Callable[[int], str]] = {"wide": looped_clusters, "chain": chained_clusters}


def cluster_project(tree: Path) -> Path:
    import shutil

    project = Path(tempfile.mkdtemp(prefix="cfnrun-stack-instructions-")) / "cluster"
    shutil.copytree(tree / "samples" / "cluster", project, ignore=LOCAL_STATE)
    template = project / "template.yml"
    template.write_text(template.read_text().replace('CALLBACK_DELAY_SECONDS: "2"', 'CALLBACK_DELAY_SECONDS: "1"'))
    return project


POLL_SECONDS = [0.25]  # between DescribeStacks calls (--poll-seconds): each poll is counted, and a slower run polls more


def create(url: str, name: str, body: str) -> None:
    client = boto3.client(
        "cloudformation", endpoint_url=url, region_name="us-east-1", aws_access_key_id="AKIDCFNRUNBENCH",
        aws_secret_access_key="cfnrun-bench", config=Config(retries={"max_attempts": 0}, read_timeout=600),
    )
    client.create_stack(StackName=name, TemplateBody=body, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    while True:
        status = client.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
        if status == "CREATE_COMPLETE":
            return
        if not status.endswith("_IN_PROGRESS"):
            raise SystemExit(f"{name}: {status}")
        time.sleep(POLL_SECONDS[0])


def main_process(tree: Path, count: int, layout: str = "wide") -> int:
    """Instructions of serve's main process (all its threads) over the create of a stack of ``count``, after a warm-up stack of 3."""
    out = Path(tempfile.mkdtemp(prefix="cfnrun-callgrind-"))
    port = free_port()
    command = CALLGRIND + [f"--callgrind-out-file={out}/callgrind.%p", sys.executable, "-c", RUN_TREE, str(tree), "serve",
                           str(cluster_project(tree)), "--port", str(port), "--virtual-clock", "--no-reload", "--log-level", "WARNING"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=USER_ENV)
    assert process.stdout is not None
    for line in process.stdout:
        if "listening on" in line:
            break
    else:
        raise SystemExit("cfnrun serve ended before it listened")
    threading.Thread(target=process.stdout.read, daemon=True).start()
    try:
        create(f"http://127.0.0.1:{port}", "warm-up", LAYOUTS[layout](3))
        subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
        create(f"http://127.0.0.1:{port}", layout, LAYOUTS[layout](count))
        subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
    finally:
        process.terminate()
        process.wait(timeout=600)
    total = 0
    for path in out.glob(f"callgrind.{process.pid}.1*"):  # the dump asked for (one file per thread, if separated)
        totals = [int(line.split()[1]) for line in path.read_text().splitlines() if line.startswith(("summary:", "totals:"))]
        total += max(totals or [0])
    if not total:
        raise SystemExit(f"no callgrind dump in {out}")
    return total


def worker_calls(tree: Path, count: int) -> int:
    """Instructions of one process making ``count`` clusters' CREATEs (three handler calls each)."""
    with tempfile.TemporaryDirectory() as state:
        done = subprocess.run(
            CACHEGRIND + ["--cachegrind-out-file=/dev/null", sys.executable, "-c", WORKER_CALLS, str(tree), str(count)],
            capture_output=True, text=True, env={**USER_ENV, "CLUSTER_STATE_DIR": state, "LOG_LEVEL": "WARNING"},
        )
    found = I_REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the worker's calls failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout measured (its cfnrun and samples/cluster)")
    parser.add_argument("--sizes", default="20,80", help="comma-separated stack sizes; slopes between consecutive ones")
    parser.add_argument("--parts", default="main,worker", help="main, worker or both")
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="wide", help="the main process's stack: independent clusters, or a chain")
    parser.add_argument("--poll-seconds", type=float, default=0.25,
                        help="between the DescribeStacks polls: a poll is counted too, and a run the machine slows polls more often per resource")
    args = parser.parse_args()
    POLL_SECONDS[0] = args.poll_seconds
    tree = args.tree.resolve()
    sizes = [int(size) for size in args.sizes.split(",")]
    parts: Dict[str, List[int]] = {}
    for part in args.parts.split(","):
        measure = {"main": lambda tree, size: main_process(tree, size, args.layout), "worker": worker_calls}[part.strip()]
        parts[part.strip()] = [measure(tree, size) for size in sizes]
    print(f"instructions per resource (valgrind: main callgrind, worker cachegrind), tree {tree}, {args.layout} stack, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for part, totals in parts.items():
        for (small, large), (before, after) in zip(zip(sizes, sizes[1:]), zip(totals, totals[1:])):
            print(f"  {part:<7} clusters {small + 1}-{large}: {(after - before) / (large - small) / 1e6:6.1f} M per resource")


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
