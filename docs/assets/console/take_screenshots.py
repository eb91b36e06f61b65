"""The console guide's screenshots (docs/guides/console.md): a real serve, stacks made with boto3, chromium driven by Playwright.

Run from the repository's root, in a venv with the test extra (``pip install -e '.[test]'``) and Debian's chromium:
``python docs/assets/console/take_screenshots.py``. It writes the PNGs beside itself.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import FIXTURES, LOCAL_STATE, SAMPLES, ServerProcess, cfnrun, wait_until  # noqa: E402 - the tests' own helpers
from console_browser import Browser, missing  # noqa: E402

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
WAITER = {"Delay": 0.2, "MaxAttempts": 300}
NOTES = {
    "Parameters": {"Password": {"Type": "String", "NoEcho": True}, "Folder": {"Type": "String", "Default": "inbox"}},
    "Resources": {
        "Inbox": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": "inbox", "Folder": {"Ref": "Folder"}, "AccessPassword": {"Ref": "Password"}}},
        "Reply": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Ref": "Inbox"}}},
        "Summary": {"Type": "Cfnrun::Sample::Note", "Properties": {"Title": {"Fn::GetAtt": ["Inbox", "NoteId"]}}, "DependsOn": "Reply"},
    },
    "Outputs": {"InboxId": {"Value": {"Ref": "Inbox"}, "Export": {"Name": "inbox-id"}}},
}
BREAKER = {"Resources": {"Breaker": {"Type": "Cfnrun::Test::RuleBreaker", "Properties": {"Name": "one", "Breaks": "no-null-values"}}}}


def main() -> int:
    why_not = missing()
    if why_not:
        print(why_not, file=sys.stderr)
        return 2
    import boto3

    folder = Path(tempfile.mkdtemp(prefix="cfnrun-screenshots-"))
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "rulebreaker", folder / "rulebreaker", ignore=LOCAL_STATE)
    fuzzed = cfnrun("fuzz", str(folder / "rulebreaker"), "--set", "Breaks=no-null-values", "--max-examples", "5", "--seed", "1")
    assert fuzzed.returncode == 1, fuzzed.stdout + fuzzed.stderr  # a minimal case recorded: the operations list shows it first
    server = ServerProcess(folder / "note", "--provider", str(folder / "rulebreaker"), "--contract", "strict")
    browser = Browser()
    try:
        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        secret = {"ParameterKey": "Password", "ParameterValue": "not-shown"}
        cloudformation.create_stack(StackName="notes", TemplateBody=json.dumps(NOTES), Parameters=[secret])
        cloudformation.get_waiter("stack_create_complete").wait(StackName="notes", WaiterConfig=WAITER)
        cloudformation.create_stack(StackName="breaking", TemplateBody=json.dumps(BREAKER))
        rolled_back = lambda: cloudformation.describe_stacks(StackName="breaking")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"  # noqa: E731
        wait_until(rolled_back, 60, "the failed create rolled back")
        change_set = cloudformation.create_change_set(
            StackName="notes", ChangeSetName="to-archive", TemplateBody=json.dumps(NOTES),
            Parameters=[secret, {"ParameterKey": "Folder", "ParameterValue": "archive"}],
        )["Id"]
        cloudformation.get_waiter("change_set_create_complete").wait(ChangeSetName=change_set, WaiterConfig=WAITER)

        tab = browser.page(60)
        shots = {
            "served.png": "/",
            "stacks.png": "/stacks",
            "stack.png": "/stack?id=notes",
            "changeset.png": "/changeset?" + urllib.parse.urlencode({"id": change_set}),
        }
        for name, path in shots.items():
            tab.goto(server.url + path)
            tab.screenshot(path=str(HERE / name))
        cloudformation.execute_change_set(ChangeSetName=change_set)  # the update replaces Inbox: a second operation in the timeline
        cloudformation.get_waiter("stack_update_complete").wait(StackName="notes", WaiterConfig=WAITER)
        tab.goto(server.url + "/stack?id=notes")
        tab.locator("table", has=tab.locator("caption", has_text="UPDATE")).screenshot(path=str(HERE / "timeline.png"))
        tab.goto(server.url + "/operations")
        tab.screenshot(path=str(HERE / "operations.png"))
        tab.goto(server.url + "/stack?id=breaking")
        tab.get_by_role("link", name="operations").first.click()
        tab.locator("tbody tr", has_text="a stack (stack test or serve)").first.locator("a").first.click()
        tab.wait_for_selector("main pre")
        tab.screenshot(path=str(HERE / "operation.png"))
        tab.go_back()
        tab.locator("tbody tr", has_text="cfnrun fuzz (minimal case)").first.locator("a").first.click()
        tab.wait_for_selector("main pre")
        tab.screenshot(path=str(HERE / "fuzz-case.png"))
    finally:
        browser.close()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    for shot in sorted(HERE.glob("*.png")):
        print(f"{shot.relative_to(ROOT)}: {shot.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
