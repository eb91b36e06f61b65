"""serve's console in a real browser (issue #35): Debian's chromium driven by Playwright, against a real serve, stacks made with boto3.

One browser for the module, its tabs reused; every wait is on the page's DOM (Playwright's waits), never a sleep.
These tests run ``live.js`` itself: the page must change while the stack runs, without a reload.
"""
from __future__ import annotations

import json
import re
import shutil
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from conftest import FIXTURES, LOCAL_STATE, PATIENCE_S, SAMPLES, ServerProcess, wait_until
from console_browser import Browser, missing

why_not = missing()
if why_not:
    pytest.skip(why_not, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - only where playwright is installed

expect.set_options(timeout=PATIENCE_S * 1000)  # a bound on a page that never shows it, not a guess of how long showing takes

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
WAITER = {"Delay": 0.2, "MaxAttempts": int(PATIENCE_S / 0.2)}
NO_ECHO = "noecho-5ecret-value"
WRITE_ONLY = "writeonly-5ecret-value"
UPDATED = re.compile(r"^Status: UPDATE_COMPLETE\s*$")
NOT_RELOADED = "window.cfnrunStillThisPage"  # set on a page; a reload or a navigation would lose it

HELD = """
Resources:
  Held:
    Type: Cfnrun::Sample::Note
    Properties: {Title: held}
    CreationPolicy: {ResourceSignal: {Count: 1, Timeout: PT30M}}
  After:
    Type: Cfnrun::Sample::Note
    Properties: {Title: !Ref Held}
"""
FOLDER = """
Parameters:
  Secret: {Type: String, NoEcho: true}
  Folder: {Type: String}
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties: {Title: moving, Folder: !Ref Folder, AccessPassword: !Ref Secret}
"""
BREAKER = """
Resources:
  Fine:
    Type: Cfnrun::Sample::Note
    Properties: {Title: fine}
  Breaker:
    Type: Cfnrun::Test::RuleBreaker
    DependsOn: Fine
    Properties: {Name: one, Breaks: no-null-values}
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    opened = Browser()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="module")
def tab(browser: Browser) -> Any:
    """The module's one tab, reused by each test."""
    return browser.page(PATIENCE_S)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[ServerProcess, Any]]:
    """serve with the note sample and the rule breaker, the contract strict (a MUST violation fails the resource)."""
    import boto3

    folder = tmp_path_factory.mktemp("console-browser")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "rulebreaker", folder / "rulebreaker", ignore=LOCAL_STATE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CFNRUN_HISTORY", "on")  # private copies: the failed resource's operation is recorded, and shown
        server = ServerProcess(folder / "note", "--no-reload", "--provider", str(folder / "rulebreaker"), "--contract", "strict")
    try:
        yield server, boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    finally:
        server.stop()


def stack_page(server: ServerProcess, name: str) -> str:
    return server.url + "/stack?" + urllib.parse.urlencode({"id": name})


def test_a_stack_page_follows_the_stack_to_create_complete_without_a_reload(console: Tuple[ServerProcess, Any], tab: Any) -> None:
    server, cloudformation = console
    cloudformation.create_stack(StackName="live", TemplateBody=HELD)  # Held waits for a signal: the page opens mid-create
    tab.goto(stack_page(server, "live"))
    tab.evaluate(f"{NOT_RELOADED} = true")
    held, after = tab.locator('g.node[data-id="Held"]'), tab.locator('g.node[data-id="After"]')
    expect(held).to_have_class("node status-IN_PROGRESS")
    expect(after).to_have_class("node status-PENDING")  # not started: it waits for Held
    expect(tab.locator("main > p").first).to_contain_text("CREATE_IN_PROGRESS")

    cloudformation.signal_resource(StackName="live", LogicalResourceId="Held", UniqueId="host-1", Status="SUCCESS")
    expect(after).to_have_class("node status-COMPLETE")  # the graph, redrawn by serve, swapped in by live.js
    expect(held).to_have_class("node status-COMPLETE")
    expect(tab.locator("main > p").first).to_contain_text("CREATE_COMPLETE")
    timeline = tab.locator("table", has=tab.locator("caption", has_text="CREATE"))
    expect(timeline.locator("tr", has_text="Received SUCCESS signal with UniqueId host-1")).to_have_count(1)
    expect(timeline.locator("tbody tr").last).to_contain_text("CREATE_COMPLETE")  # the stack's own last event
    expect(timeline.locator("tbody tr").last).to_contain_text("AWS::CloudFormation::Stack")
    assert tab.evaluate(NOT_RELOADED) is True  # the same page all along: nothing reloaded it


def test_a_change_set_page_flags_the_replacement_and_the_stack_page_follows_it_executed_then_the_delete(
    console: Tuple[ServerProcess, Any], tab: Any,
) -> None:
    server, cloudformation = console
    secret = {"ParameterKey": "Secret", "ParameterValue": NO_ECHO}
    cloudformation.create_stack(StackName="moving", TemplateBody=FOLDER, Parameters=[secret, {"ParameterKey": "Folder", "ParameterValue": "inbox"}])
    cloudformation.get_waiter("stack_create_complete").wait(StackName="moving", WaiterConfig=WAITER)
    change_set = cloudformation.create_change_set(
        StackName="moving", ChangeSetName="to-archive", TemplateBody=FOLDER,
        Parameters=[secret, {"ParameterKey": "Folder", "ParameterValue": "archive"}],
    )["Id"]
    cloudformation.get_waiter("change_set_create_complete").wait(ChangeSetName=change_set, WaiterConfig=WAITER)

    tab.goto(stack_page(server, "moving"))
    tab.get_by_role("link", name="to-archive").click()  # from the stack's page, as a user goes
    expect(tab.locator("h1")).to_have_text("Change set to-archive")
    row = tab.locator("tbody tr", has=tab.locator("td", has_text="Note"))
    expect(row.locator("td").nth(0)).to_have_text("Modify")
    expect(row.locator("td").nth(4).locator("strong")).to_have_text("True")  # replacement, in bold
    expect(row.locator("td").nth(5)).to_contain_text("Folder: DirectModification, recreation Always")
    expect(row.locator("td").nth(6)).to_contain_text("inbox")
    expect(row.locator("td").nth(7)).to_contain_text("archive")

    tab.go_back()  # the stack's page, live, while the change set runs and the stack is deleted
    tab.evaluate(f"{NOT_RELOADED} = true")
    first = tab.locator("tbody tr", has=tab.locator("td", has_text="Note")).first.locator("td").nth(3).inner_text()
    cloudformation.execute_change_set(ChangeSetName=change_set)
    update = tab.locator("table", has=tab.locator("caption", has_text="UPDATE"))
    expect(update.locator("tr", has_text="Requested update requires the creation of a new physical resource")).to_have_count(1)
    expect(tab.locator("main > p").first).to_have_text(UPDATED)  # not ..._CLEANUP_IN_PROGRESS: the delete comes after
    expect(update.locator("tr", has_text="DELETE_COMPLETE")).to_have_count(1)  # the old note, deleted in the clean-up
    resources = tab.locator("table", has=tab.locator("th", has_text="physical id"))
    expect(resources.locator("tbody tr").first.locator("td").nth(3)).not_to_have_text(first)  # a new physical id
    cloudformation.delete_stack(StackName="moving")
    expect(tab.locator("main > p").first).to_contain_text("DELETE_COMPLETE")
    expect(resources.locator("tbody tr").first.locator("td").nth(2)).to_have_text("DELETE_COMPLETE")
    assert tab.evaluate(NOT_RELOADED) is True


def test_a_failed_resource_leads_to_its_operations_timeline_and_the_violated_rule(console: Tuple[ServerProcess, Any], tab: Any) -> None:
    server, cloudformation = console
    cloudformation.create_stack(StackName="breaking", TemplateBody=BREAKER)
    rolled_back = lambda: cloudformation.describe_stacks(StackName="breaking")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"  # noqa: E731
    wait_until(rolled_back, PATIENCE_S, "the failed create rolled back")  # boto3's rollback waiter is an update's

    tab.goto(stack_page(server, "breaking"))
    resources = tab.locator("table", has=tab.locator("th", has_text="physical id"))
    failed = resources.locator("tbody tr", has=tab.locator("td", has_text="Breaker"))
    expect(failed.locator(".status-FAILED").first).to_be_visible()
    failed.get_by_role("link", name="operations").click()
    expect(tab.locator("h1")).to_have_text("Operations")
    create = tab.locator("tbody tr", has=tab.locator("td", has_text="CREATE")).filter(has_text="FAILED")
    create.first.locator("a").first.click()
    expect(tab.locator("h1")).to_contain_text("Operation ")
    timeline = tab.locator("main pre")
    expect(timeline).to_contain_text("[no-null-values]")  # the violation with its rule id
    expect(tab.locator("main code")).to_contain_text("cfnrun replay ")


def test_no_echo_and_write_only_values_appear_nowhere_in_the_pages_or_their_responses(
    console: Tuple[ServerProcess, Any], browser: Browser,
) -> None:
    import boto3

    server, cloudformation = console
    watched = browser.page(PATIENCE_S)  # a tab of its own, followed from its first request
    bodies: List[Tuple[str, bytes]] = []
    pending: List[Any] = []
    watched.on("response", lambda response: pending.append(response))

    def drained() -> None:
        """Every response so far, read now: the page it belongs to is still open."""
        while pending:
            response = pending.pop(0)
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                continue  # still streaming: its notices carry a stack's id, name and status only (tests/test_console.py)
            bodies.append((response.url, response.body()))

    watched.goto(server.url + "/stacks")
    watched.evaluate(f"{NOT_RELOADED} = true")
    parameters = [{"ParameterKey": "Secret", "ParameterValue": NO_ECHO}, {"ParameterKey": "Folder", "ParameterValue": "inbox"}]
    cloudformation.create_stack(StackName="secretive", TemplateBody=FOLDER, Parameters=parameters)  # NoEcho, and passed on as a writeOnly value
    expect(watched.locator("tr", has_text="secretive")).to_contain_text("CREATE_COMPLETE")  # live.js fetched the list meanwhile
    assert watched.evaluate(NOT_RELOADED) is True
    drained()
    cloud_control = boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)
    token = cloud_control.create_resource(TypeName="Cfnrun::Sample::Note", DesiredState=json.dumps({"Title": "direct", "AccessPassword": WRITE_ONLY}))
    cloud_control.get_waiter("resource_request_success").wait(
        RequestToken=token["ProgressEvent"]["RequestToken"], WaiterConfig={"Delay": 0.2, "MaxAttempts": int(PATIENCE_S / 0.2)},
    )
    operations = lambda: urllib.request.urlopen(server.url + "/operations", timeout=30).read().decode()  # noqa: E731
    wait_until(lambda: "<td>cloudcontrol</td>" in operations(), PATIENCE_S, "the Cloud Control create recorded")  # committed in the background

    texts: List[str] = []
    visited = ["/", "/stacks", "/stack?id=secretive", "/operations"]
    while visited:
        watched.goto(server.url + visited.pop(0))
        texts.append(watched.inner_text("body"))
        texts.append(watched.content())
        if watched.url.endswith("/operations"):
            visited += [link for link in watched.eval_on_selector_all("main a", "links => links.map(a => a.getAttribute('href'))")
                        if link.startswith("/operation?")]
        drained()
    assert any("AccessPassword" in t for t in texts)  # the writeOnly property is named (the schema, the template)
    assert len([url for url, _ in bodies if "/operation?" in url]) >= 2  # the stack's operation and Cloud Control's
    assert len([url for url, _ in bodies if url.endswith("/stacks")]) >= 3  # loaded, then fetched by live.js, then visited
    for shown in texts:
        assert NO_ECHO not in shown and WRITE_ONLY not in shown
    for url, body in bodies:
        assert NO_ECHO.encode() not in body and WRITE_ONLY.encode() not in body, url
    watched.close()


def test_the_served_page_shows_a_reloads_syntax_error_and_its_fix_without_a_reload(tmp_path: Path, browser: Browser, tab: Any) -> None:
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = ServerProcess(tmp_path / "note")  # --reload, the default
    try:
        tab.goto(server.url + "/")
        tab.evaluate(f"{NOT_RELOADED} = true")
        reload = tab.locator("p.reload")
        expect(reload).to_have_text("Reload: watching; no save since serve started.")
        server.has_printed(r"reload: watching")  # the watch is in place before the save
        handlers = tmp_path / "note" / "src" / "cfnrun_sample_note" / "handlers.py"
        good = handlers.read_text()
        handlers.write_text(good + "\ndef half_written(:\n")
        error = tab.locator("pre.reload-error")
        expect(error).to_contain_text("Runtime.UserCodeSyntaxError")
        expect(error).to_contain_text(f"handlers.py:{len(good.splitlines()) + 2}")  # the syntax error's file:line
        expect(reload).to_contain_text("does not load: TypeFunction")

        handlers.write_text(good)
        expect(reload).to_contain_text("new code live in TypeFunction")
        expect(error).to_have_count(0)
        assert tab.evaluate(NOT_RELOADED) is True
    finally:
        server.stop()


def test_the_bundled_stack_sample_is_followed_live_through_create_update_with_replacement_and_delete(
    tmp_path: Path, tab: Any,
) -> None:
    import os
    import subprocess
    import sys

    import boto3

    for name in ("note", "cluster", "parameter"):
        shutil.copytree(SAMPLES / name, tmp_path / name, ignore=LOCAL_STATE)
    process = subprocess.Popen(  # what the "done when" runs, the parameter type too (the sample's NoteSetting)
        [sys.executable, "-m", "cfnrun", "serve", "--port", "0", "--no-reload", "--moto", "--virtual-clock",
         "--provider", "note", "--provider", "cluster", "--provider", "parameter"],
        cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    server = ServerProcess(tmp_path, process=process)
    try:
        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        template = (SAMPLES / "stack" / "template.yaml").read_text(encoding="utf-8")
        stack_id = cloudformation.create_stack(StackName="sample", TemplateBody=template)["StackId"]
        tab.goto(server.url + "/stack?" + urllib.parse.urlencode({"id": stack_id}))
        tab.evaluate(f"{NOT_RELOADED} = true")
        status = tab.locator("main > p").first
        expect(status).to_contain_text("CREATE_COMPLETE")
        for logical_id in ("Bucket", "Cluster", "Note", "NoteSetting"):
            expect(tab.locator(f'g.node[data-id="{logical_id}"]')).to_have_class("node status-COMPLETE")

        cloudformation.update_stack(StackName="sample", TemplateBody=template, Parameters=[{"ParameterKey": "Folder", "ParameterValue": "archive"}])
        update = tab.locator("table", has=tab.locator("caption", has_text="UPDATE"))
        expect(update.locator("tr", has_text="Requested update requires the creation of a new physical resource")).to_have_count(1)
        expect(status).to_have_text(UPDATED)

        cloudformation.delete_stack(StackName="sample")
        expect(status).to_contain_text("DELETE_COMPLETE")
        assert tab.evaluate(NOT_RELOADED) is True
        assert "correct-horse-battery" not in tab.content()  # the sample's NoEcho default
    finally:
        server.stop()
