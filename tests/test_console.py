"""serve's browser console (issue #35): real serve, stacks made with boto3, pages read over HTTP as a browser gets them."""
from __future__ import annotations

import json
import re
import shutil
import signal
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import pytest

from cfnrun.app.settings.serve import SHUTDOWN_GRACE_S
from conftest import FIXTURES, LOCAL_STATE, MISBEHAVING, PATIENCE_S, SAMPLES, ServerProcess, cfnrun, wait_until

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}
SECRET = "hunter2-never-shown"
XSS = "<script>alert('owned')</script>"
TEMPLATE = """
Parameters:
  Secret:
    Type: String
    NoEcho: true
  Heading:
    Type: String
Resources:
  Note:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: !Ref Heading
      AccessPassword: !Ref Secret
Outputs:
  Shown:
    Value: !Ref Heading
"""


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[ServerProcess, Any]]:
    import boto3

    folder = tmp_path_factory.mktemp("console")
    shutil.copytree(SAMPLES / "note", folder / "note", ignore=LOCAL_STATE)
    shutil.copytree(FIXTURES / "stackhook", folder / "stackhook", ignore=LOCAL_STATE)
    server = ServerProcess(folder / "note", "--no-reload", "--hook", str(folder / "stackhook"))  # the hook stays off until a test turns it on
    try:
        yield server, boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
    finally:
        server.stop()


def get(server: ServerProcess, path: str) -> Tuple[int, str, str]:
    try:
        with urllib.request.urlopen(server.url + path, timeout=30) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def test_the_start_line_names_the_console_and_its_page_shows_what_is_served(console: Tuple[ServerProcess, Any]) -> None:
    server, _ = console
    assert server.has_printed(r"console: open http://127\.0\.0\.1:\d+/ in a browser")
    status, content_type, body = get(server, "/")
    assert status == 200 and content_type.startswith("text/html"), body
    assert "Cfnrun::Sample::Note" in body and "resource type" in body
    assert "/properties/NoteId" in body  # the primary identifier
    assert "/properties/AccessPassword" in body  # writeOnly properties named, never a value
    assert "CREATE timeout (min)" in body
    stylesheet = get(server, "/console/static/console.css")
    assert stylesheet[0] == 200 and "table" in stylesheet[2]  # shipped in the package, no CDN


def test_a_stack_page_shows_resources_events_and_outputs_escaped_and_never_a_secret(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    stack_id = cloudformation.create_stack(
        StackName="shown",
        TemplateBody=TEMPLATE,
        Parameters=[{"ParameterKey": "Secret", "ParameterValue": SECRET}, {"ParameterKey": "Heading", "ParameterValue": XSS}],
    )["StackId"]
    cloudformation.get_waiter("stack_create_complete").wait(StackName="shown", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    physical_id = cloudformation.describe_stack_resource(StackName="shown", LogicalResourceId="Note")["StackResourceDetail"]["PhysicalResourceId"]

    status, _, listed = get(server, "/stacks")
    assert status == 200 and "shown" in listed and "CREATE_COMPLETE" in listed
    link = "/stack?id=" + urllib.parse.quote(stack_id, safe="")
    assert link in listed

    status, _, page = get(server, link)
    assert status == 200, page
    assert "Cfnrun::Sample::Note" in page and physical_id in page
    assert page.count("CREATE_COMPLETE") >= 2  # the resource's and the stack's events
    assert "<caption>CREATE</caption>" in page  # the events grouped by operation
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt;" in page  # the parameter and the output, escaped
    assert XSS not in page and re.findall(r"<script[^>]*>", page) == ['<script src="/console/static/live.js" defer>']  # only the shipped one
    assert SECRET not in page and "****" in page  # NoEcho masked; the writeOnly AccessPassword never shown
    for path in ("/", "/stacks", "/stack?id=shown"):
        assert SECRET not in get(server, path)[2]


def test_an_unknown_stack_is_a_404_page_and_the_apis_still_answer(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    status, _, page = get(server, "/stack?id=%3Cb%3Enope")
    assert status == 404 and "&lt;b&gt;nope" in page
    assert cloudformation.list_stacks()["ResponseMetadata"]["HTTPStatusCode"] == 200  # POST / untouched
    status, _, _ = get(server, "/2015-03-31/functions/TypeFunction/invocations")
    assert status == 405  # the Invoke API's own answer to a GET, as before
    refused = urllib.request.Request(server.url + "/stacks", data=b"delete=shown", method="POST")
    with pytest.raises(urllib.error.HTTPError) as posted:
        urllib.request.urlopen(refused, timeout=30)
    assert posted.value.code == 404  # the console changes nothing: a POST to its pages is the API's unknown operation
    with urllib.request.urlopen(server.url + "/stacks", timeout=30) as answer:
        assert "default-src 'self'" in answer.headers["Content-Security-Policy"]  # nothing injected could run


def test_operations_are_listed_filtered_and_shown_as_timelines_with_their_replay_command(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    cloudformation.create_stack(
        StackName="recorded",
        TemplateBody=TEMPLATE,
        Parameters=[{"ParameterKey": "Secret", "ParameterValue": SECRET}, {"ParameterKey": "Heading", "ParameterValue": "plain"}],
    )
    cloudformation.get_waiter("stack_create_complete").wait(StackName="recorded", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    _, _, stack_page = get(server, "/stack?id=recorded")
    assert "/operations?type=Cfnrun%3A%3ASample%3A%3ANote" in stack_page  # a resource links to its type's operations

    status, _, listed = get(server, "/operations?type=Cfnrun%3A%3ASample%3A%3ANote&action=CREATE")
    assert status == 200 and "Cfnrun::Sample::Note" in listed and "CREATE" in listed, listed
    links = re.findall(r'href="(/operation\?[^"]+)"', listed)
    assert links, listed
    assert "No recorded operations." in get(server, "/operations?action=LIST")[2]  # the filter filters

    status, _, shown = get(server, links[0].replace("&amp;", "&"))
    assert status == 200, shown
    number = re.search(r"id=(\d+)", links[0]).group(1)  # type: ignore[union-attr]
    assert f"cfnrun replay {number}" in shown
    assert "SUCCESS CREATE after 1 invocation(s)" in shown  # the timeline as history show prints it
    assert SECRET not in shown  # the writeOnly AccessPassword is masked in history
    assert get(server, "/operation?type=Cfnrun%3A%3ASample%3A%3ANote&id=99999")[0] == 404


def test_a_change_set_shows_its_changes_table_with_the_replacement_flagged_and_secrets_masked(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    with_folder = TEMPLATE.replace("      Title: !Ref Heading", "      Title: !Ref Heading\n      Folder: !Ref Folder").replace(
        "  Heading:\n    Type: String", "  Heading:\n    Type: String\n  Folder:\n    Type: String"
    )
    secret = {"ParameterKey": "Secret", "ParameterValue": SECRET}
    cloudformation.create_stack(
        StackName="changing", TemplateBody=with_folder,
        Parameters=[secret, {"ParameterKey": "Heading", "ParameterValue": "one"}, {"ParameterKey": "Folder", "ParameterValue": "inbox"}],
    )
    cloudformation.get_waiter("stack_create_complete").wait(StackName="changing", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    change_set_id = cloudformation.create_change_set(
        StackName="changing", ChangeSetName="move", TemplateBody=with_folder,
        Parameters=[secret, {"ParameterKey": "Heading", "ParameterValue": "one"}, {"ParameterKey": "Folder", "ParameterValue": "archive"}],
    )["Id"]
    cloudformation.get_waiter("change_set_create_complete").wait(ChangeSetName=change_set_id, WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})

    _, _, stack_page = get(server, "/stack?id=changing")
    link = "/changeset?" + urllib.parse.urlencode({"id": change_set_id})
    assert link.replace("&", "&amp;") in stack_page, stack_page
    status, _, page = get(server, link)
    assert status == 200, page
    # Folder is createOnly: Modify, replacement True, the property named with what it requires
    assert re.search(r"<td>Modify</td><td>Note</td>.*<td>Cfnrun::Sample::Note</td><td><strong>True</strong></td><td>Folder: DirectModification, recreation Always<br>Folder: ParameterReference, recreation Always", page), page
    assert "inbox" in page and "archive" in page  # before and after
    assert SECRET not in page  # NoEcho and writeOnly (AccessPassword) masked in the before/after values
    assert get(server, "/changeset?id=nope")[0] == 404


# -- live updates: server-sent events ------------------------------------------------------------


class EventStream:
    """``GET /console/events`` read as a browser's EventSource reads it: line by line, as the server writes."""

    def __init__(self, server: ServerProcess, path: str = "/console/events") -> None:
        import http.client

        host, port = urllib.parse.urlsplit(server.url).netloc.rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=PATIENCE_S)
        self.connection.request("GET", path, headers={"Accept": "text/event-stream"})
        self.answer = self.connection.getresponse()
        assert self.answer.status == 200 and self.answer.headers["Content-Type"].startswith("text/event-stream")
        self.next_line(": following")  # serve listens for changes from here on

    def next_line(self, wanted: str) -> str:
        while True:
            line = self.answer.readline().decode()
            assert line, f"the stream ended before {wanted!r}"
            if line.startswith(wanted):
                return line.rstrip("\n")

    def next_notice(self) -> Dict[str, str]:
        self.next_line("event: changed")
        notice: Dict[str, str] = json.loads(self.next_line("data: ")[len("data: "):])
        return notice

    def close(self) -> None:
        self.connection.close()


def test_an_event_stream_tells_each_change_of_a_running_stack_and_its_page_follows(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    everything = EventStream(server)
    try:
        stack_id = cloudformation.create_stack(
            StackName="live", TemplateBody=TEMPLATE,
            Parameters=[{"ParameterKey": "Secret", "ParameterValue": SECRET}, {"ParameterKey": "Heading", "ParameterValue": "x"}],
        )["StackId"]
        notice = everything.next_notice()
        assert notice["stack"] == stack_id and notice["name"] == "live", notice
        while notice["status"] != "CREATE_COMPLETE":  # told as it runs, up to its end, without asking again
            notice = everything.next_notice()
            assert notice["stack"] == stack_id
    finally:
        everything.close()
    status, _, page = get(server, "/stack?id=live")
    assert status == 200 and "<p>Status: <span class=\"status-COMPLETE\">CREATE_COMPLETE</span>" in page
    stream = "/console/events?" + urllib.parse.urlencode({"stack": stack_id})
    by_id = "/stack?" + urllib.parse.urlencode({"id": stack_id})
    assert f'<main id="live" data-events="{stream}" data-source="{by_id}">' in page  # live.js follows this stack's stream, by id
    assert '<main id="live" data-events="/console/events">' in get(server, "/stacks")[2]
    script = get(server, "/console/static/live.js")
    assert script[0] == 200 and "EventSource" in script[2] and "javascript" in script[1]


def test_a_stack_stream_tells_only_that_stack(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    parameters = [{"ParameterKey": "Secret", "ParameterValue": SECRET}, {"ParameterKey": "Heading", "ParameterValue": "x"}]
    cloudformation.create_stack(StackName="followed", TemplateBody=TEMPLATE, Parameters=parameters)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="followed", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    followed = EventStream(server, "/console/events?stack=followed")
    try:
        cloudformation.create_stack(StackName="other", TemplateBody=TEMPLATE, Parameters=parameters)
        cloudformation.get_waiter("stack_create_complete").wait(StackName="other", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
        cloudformation.delete_stack(StackName="followed")
        notice = followed.next_notice()
        assert notice["name"] == "followed" and notice["status"].startswith("DELETE_"), notice  # nothing of "other" first (its status as of the notice)
    finally:
        followed.close()


def test_serve_stops_within_its_grace_with_an_event_stream_open(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "note", tmp_path / "note", ignore=LOCAL_STATE)
    server = ServerProcess(tmp_path / "note", "--no-reload")
    try:
        server.has_printed("CloudFormation API")
        stream = EventStream(server)
        server.process.send_signal(signal.SIGTERM)
        stream.next_line("event: closing")  # serve ends the stream itself rather than waiting for it
        assert stream.answer.read().strip() == b"data: serve stops"  # then the stream ends, read to its end
        assert server.process.wait(timeout=SHUTDOWN_GRACE_S) == 0
        stream.close()
    finally:
        server.stop()


# -- the dependency graph ------------------------------------------------------------------------

CHAIN = """
Resources:
  First:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: first
  Second:
    Type: Cfnrun::Sample::Note
    Properties:
      Title: !Ref First
  Third:
    Type: Cfnrun::Sample::Note
    DependsOn: Second
    Properties:
      Title: !GetAtt First.NoteId
"""


def test_a_stack_page_draws_its_dependency_graph_as_svg_coloured_by_status(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    cloudformation.create_stack(StackName="chain", TemplateBody=CHAIN)
    cloudformation.get_waiter("stack_create_complete").wait(StackName="chain", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    status, _, page = get(server, "/stack?id=chain")
    assert status == 200
    svg = re.search(r"<svg class=\"dependencies\".*?</svg>", page)
    assert svg is not None, page
    nodes = re.findall(r'<g class="node (status-\w+)" data-id="(\w+)">', svg.group(0))
    assert sorted(nodes) == [("status-COMPLETE", "First"), ("status-COMPLETE", "Second"), ("status-COMPLETE", "Third")]
    edges = re.findall(r'<(?:line|path) class="edge" data-from="(\w+)" data-to="(\w+)"', svg.group(0))
    assert sorted(edges) == [("First", "Second"), ("First", "Third"), ("Second", "Third")]  # Ref, GetAtt, DependsOn
    columns = {name: float(x) for name, x in re.findall(r'data-id="(\w+)"><title>[^<]*</title><rect x="([\d.]+)"', svg.group(0))}
    assert columns["First"] < columns["Second"] < columns["Third"]  # layered by dependency depth
    assert "style=" not in svg.group(0)  # coloured by the stylesheet: the CSP allows no inline style


# -- hook results and drift ----------------------------------------------------------------------

HOOK = "Cfnrun::Test::StackHook"


def hook_turned(cloudformation: Any, status: str) -> None:
    document = {"CloudFormationConfiguration": {"HookConfiguration": {
        "HookInvocationStatus": status, "FailureMode": "FAIL", "TargetOperations": ["RESOURCE"],
    }}}
    cloudformation.set_type_configuration(TypeName=HOOK, Type="HOOK", Configuration=json.dumps(document))


def test_a_stack_page_shows_its_hook_results_with_annotations_and_drift_results_masked(console: Tuple[ServerProcess, Any]) -> None:
    server, cloudformation = console
    hook_turned(cloudformation, "ENABLED")
    try:
        cloudformation.create_stack(StackName="judged", TemplateBody=TEMPLATE.replace("Title: !Ref Heading", "Title: !Ref Secret"), Parameters=[
            {"ParameterKey": "Secret", "ParameterValue": SECRET}, {"ParameterKey": "Heading", "ParameterValue": "h"},
        ])
        cloudformation.get_waiter("stack_create_complete").wait(StackName="judged", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    finally:
        hook_turned(cloudformation, "DISABLED")
    detection = cloudformation.detect_stack_drift(StackName="judged")["StackDriftDetectionId"]
    deadline = time.monotonic() + PATIENCE_S
    while cloudformation.describe_stack_drift_detection_status(StackDriftDetectionId=detection)["DetectionStatus"] == "DETECTION_IN_PROGRESS":
        assert time.monotonic() < deadline, "the drift detection never ended"
        time.sleep(0.1)  # polled as a client polls it (boto3 has no waiter for it)

    status, _, page = get(server, "/stack?id=judged")
    assert status == 200
    hooks = page.split("<h2>Hook results</h2>")[1].split("<h2>")[0]
    assert HOOK in hooks and "RESOURCE" in hooks and "HOOK_COMPLETE_SUCCEEDED" in hooks, hooks
    assert "NoteTitle · PASSED · Title &#x27;****&#x27;" in hooks  # the annotation, its NoEcho value masked
    drift = page.split("<h2>Drift</h2>")[1].split("<h2>")[0]
    assert "<td>Note</td><td>Cfnrun::Sample::Note</td><td>IN_SYNC</td>" in drift, drift
    assert SECRET not in page


# -- the worker pools and the last reload --------------------------------------------------------


def test_the_served_page_shows_each_pool_warm_and_busy_and_the_last_reload_with_its_syntax_error(tmp_path: Path) -> None:
    import threading

    project = tmp_path / "misbehaving"
    shutil.copytree(MISBEHAVING, project, ignore=LOCAL_STATE)
    server = ServerProcess(project, "--workers", "1")
    try:
        lambda_client = server.client()
        started = tmp_path / "started"
        busy = threading.Thread(target=lambda: lambda_client.invoke(
            FunctionName="TypeFunction", Payload=json.dumps({"do": "sleep", "seconds": 3, "started": str(started)}).encode(),
        ))
        busy.start()
        wait_until(started.exists, what="the slow call to start")
        page = get(server, "/")[2]
        assert re.search(r"<td>TypeFunction</td>.*?<td>1</td><td>0</td><td>1</td></tr>", page), page  # 1 worker: none idle, 1 busy
        assert "Reload: watching; no save since serve started." in page
        busy.join(timeout=PATIENCE_S)
        assert re.search(r"<td>TypeFunction</td>.*?<td>1</td><td>1</td><td>0</td></tr>", get(server, "/")[2])  # warm again

        handlers = project / "behaviours.py"
        good = handlers.read_text()
        handlers.write_text(good + "\ndef half_written(:\n")
        server.wait_for_line(r"reload: TypeFunction does not load: Runtime.UserCodeSyntaxError")
        page = get(server, "/")[2]
        assert "after behaviours.py changed: <span class=\"status-FAILED\">does not load: TypeFunction, Broken</span>" in page, page
        assert re.search(rf"<pre class=\"reload-error\">TypeFunction: Runtime.UserCodeSyntaxError: [^<]*behaviours.py:{len(good.splitlines()) + 2}", page), page

        handlers.write_text(good)
        server.wait_for_line(r"reload: new code live")
        page = get(server, "/")[2]
        shown = re.search(r"<p class=\"reload\">.*?</p>", page)
        assert shown and "<span class=\"status-COMPLETE\">new code live in TypeFunction</span>" in shown.group(0), page
        assert "TypeFunction: Runtime" not in page  # its error is gone (Broken, broken on purpose, still does not load)
    finally:
        server.stop()


# -- fuzz and stack test results -----------------------------------------------------------------


def test_fuzz_and_stack_test_findings_come_first_in_the_operations_list_the_minimal_case_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    import boto3

    monkeypatch.setenv("CFNRUN_HISTORY", "on")  # in a private copy: fuzz, stack test and serve record in its .cfnrun/
    project = tmp_path / "rulebreaker"
    shutil.copytree(FIXTURES / "rulebreaker", project, ignore=LOCAL_STATE)
    fuzzed = cfnrun("fuzz", str(project), "--set", "Breaks=no-null-values", "--max-examples", "5", "--seed", "1", timeout=120)
    assert fuzzed.returncode == 1, fuzzed.stdout + fuzzed.stderr
    case = re.search(r"cfnrun replay (\d+)", fuzzed.stdout).group(1)  # type: ignore[union-attr]
    (tmp_path / "breaks.yaml").write_text("Resources:\n  Breaker:\n    Type: Cfnrun::Test::RuleBreaker\n    Properties: {Name: one, Breaks: no-null-values}\n")
    tested = cfnrun("stack", "test", "breaks.yaml", "--provider", "rulebreaker", "--keep", cwd=tmp_path, timeout=120)
    assert tested.returncode == 1, tested.stdout + tested.stderr  # --contract strict: the MUST violation fails it

    server = ServerProcess(project, "--no-reload")  # what it records comes after the findings: the newest
    try:
        cloud_control = boto3.client("cloudcontrol", endpoint_url=server.url, **CREDENTIALS)
        token = cloud_control.create_resource(TypeName="Cfnrun::Test::RuleBreaker", DesiredState=json.dumps({"Name": "fine"}))
        cloud_control.get_waiter("resource_request_success").wait(
            RequestToken=token["ProgressEvent"]["RequestToken"], WaiterConfig={"Delay": 0.2, "MaxAttempts": int(PATIENCE_S / 0.2)},
        )
        recorded = lambda: "<td>cloudcontrol</td>" in get(server, "/operations")[2]  # noqa: E731 - serve's history writer commits in the background
        wait_until(recorded, PATIENCE_S, "the Cloud Control create recorded")
        status, _, page = get(server, "/operations")
        assert status == 200, page
        found, everything = page.split("<h2>All operations</h2>")
        assert found.index("<h2>Found failing</h2>") < found.index("<table>")
        rows = re.findall(r"<tr><td><a href=\"/operation\?[^\"]*id=(\d+)\">\d+</a></td><td>[^<]*</td><td>([^<]*)</td>", found)
        assert rows[0] == (case, "cfnrun fuzz (minimal case)"), found  # the minimal case first
        assert [via for _, via in rows[1:]] and {via for _, via in rows[1:]} == {"a stack (stack test or serve)"}, found
        assert "contract-violation" in found  # the stacks' failed operations' error code
        vias = re.findall(r"<tr><td><a href=\"/operation\?[^\"]*\">\d+</a></td><td>[^<]*</td><td>([^<]*)</td>", everything)
        assert "cloudcontrol" in vias and "fuzz" in vias and "stack" in vias, everything  # below, every operation
        assert vias.index("cloudcontrol") < vias.index("fuzz"), everything  # newest first: the fuzz case is older, shown first above

        status, _, shown = get(server, "/operation?" + urllib.parse.urlencode({"type": "Cfnrun::Test::RuleBreaker", "id": case}))
        assert status == 200, shown
        assert f"cfnrun replay {case}" in shown and "[no-null-values]" in shown and "CREATE #1" in shown, shown  # the case's steps
    finally:
        server.stop()


# -- at scale ------------------------------------------------------------------------------------

RESOURCES = 500  # CloudFormation's most resources in one stack
OPERATIONS = 10_000


def test_a_500_resource_stack_and_10000_recorded_operations_are_shown_a_page_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cfnrun.history.store import HistoryStore

    monkeypatch.setenv("CFNRUN_HISTORY", "on")  # in a private copy
    monkeypatch.setenv("CFNRUN_HISTORY_LIMIT", str(OPERATIONS))
    project = tmp_path / "note"
    shutil.copytree(SAMPLES / "note", project, ignore=LOCAL_STATE)
    history = HistoryStore(project, limit=OPERATIONS)  # as a long-lived serve leaves it: the history's bound, full
    request = json.dumps({"source": "invoke", "typeName": "Cfnrun::Sample::Note", "request": {}})
    with history.batch():
        for n in range(OPERATIONS):
            head = {"type_name": "Cfnrun::Sample::Note", "action": ("CREATE", "READ")[n % 2], "function": "TypeFunction",
                    "status": "SUCCESS", "invocations": 1, "duration_s": 0.01, "started_at": 1_700_000_000 + n}
            history.add("invoke", None, head, request, [])
    history.close()

    server = ServerProcess(project, "--no-reload")
    try:
        import boto3

        cloudformation = boto3.client("cloudformation", endpoint_url=server.url, **CREDENTIALS)
        handles = {f"Handle{n}": {"Type": "AWS::CloudFormation::WaitConditionHandle", **({"DependsOn": f"Handle{n - 50}"} if n >= 50 else {})}
                   for n in range(RESOURCES)}  # ten layers of fifty
        cloudformation.create_stack(StackName="large", TemplateBody=json.dumps({"Resources": handles}))
        cloudformation.get_waiter("stack_create_complete").wait(StackName="large", WaiterConfig={"Delay": 0.5, "MaxAttempts": int(PATIENCE_S / 0.5)})
        status, _, page = get(server, "/stack?id=large")
        assert status == 200
        assert page.count('<g class="node status-COMPLETE"') == RESOURCES and page.count('class="edge"') == RESOURCES - 50
        assert page.count("<td>AWS::CloudFormation::WaitConditionHandle</td>") >= RESOURCES  # each resource's row (and its events)

        status, _, first = get(server, "/operations")
        ids = [int(n) for n in re.findall(r'<a href="/operation\?[^"]*id=(\d+)">', first)]
        assert status == 200 and ids == list(range(OPERATIONS, OPERATIONS - 100, -1)), ids[:3]  # the newest hundred
        assert 'rel="next" href="/operations?limit=100&amp;page=2"' in first and 'rel="prev"' not in first
        status, _, last = get(server, "/operations?limit=1000&page=10")
        ids = [int(n) for n in re.findall(r'<a href="/operation\?[^"]*id=(\d+)">', last)]
        assert ids == list(range(1000, 0, -1)) and 'rel="next"' not in last and 'rel="prev"' in last
        reads = get(server, "/operations?action=READ&page=50")[2]  # a filter reads every operation
        ids = [int(n) for n in re.findall(r'<a href="/operation\?[^"]*id=(\d+)">', reads)]
        assert ids == list(range(200, 0, -2)), ids[:3]  # the oldest hundred READs
    finally:
        server.stop()
