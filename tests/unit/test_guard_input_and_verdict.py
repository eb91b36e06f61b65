"""A Guard hook's input (the Hooks user guide's shape), the verdict read from CloudFormation Guard's report, and where its files are read."""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from cfnrun.app.stacks.hook_files import HookFiles, UnreadableFile, s3_object
from cfnrun.stacks.guard_input import GuardInputError, guard_input, read_input_params, with_input_params
from cfnrun.model.budgets import Budgets
from cfnrun.stacks.guard_process import evaluated
from cfnrun.stacks.guard_rules import GuardError, GuardVerdict, evaluate, read_verdict
from cfnrun.stacks.hooks import CHANGE_SET_TARGET, STACK_TARGET, HookedOperation, change_set_model, managed_hook_model, stack_model
from cfnrun.stacks.plan import ResourceChange
from cfnrun.stacks.provisioning import StackContext

STACK = StackContext("arn:aws:cloudformation:us-east-1:123456789012:stack/app/1", "app", "us-east-1", "123456789012")
RULES = """\
let buckets = Resources.*[ Type == "AWS::S3::Bucket" ]
rule versioning when %buckets !empty {
    %buckets.Properties.VersioningConfiguration.Status == "Enabled"
    <<
        Versioning must be
        Enabled
    >>
}
rule tagged when %buckets !empty {
    %buckets.Properties.Tags exists
}
rule kept when Previous exists {
    Previous.*.Properties.VersioningConfiguration.Status != "Enabled" or
    Resources.*.Properties.VersioningConfiguration.Status == "Enabled"
    << Versioning once Enabled stays Enabled >>
}
"""


def bucket(status: str, action: str = "CREATE", previous: Any = None) -> HookedOperation:
    properties: Dict[str, Any] = {"VersioningConfiguration": {"Status": status}, "Tags": [{"Key": "team", "Value": "a"}]}
    return HookedOperation(STACK, action, "Logs", "AWS::S3::Bucket", properties, previous)


def test_a_create_is_shown_with_its_hook_context_and_the_resource_under_its_logical_id() -> None:
    document = guard_input(bucket("Enabled"), "My::Guard::Hook")
    assert document == {
        "HookContext": {
            "AWSAccountID": "123456789012",
            "StackId": STACK.stack_id,
            "HookTypeName": "My::Guard::Hook",
            "HookTypeVersion": "00000001",
            "InvocationPoint": "CREATE_PRE_PROVISION",
            "TargetName": "AWS::S3::Bucket",
            "TargetType": "RESOURCE",
            "TargetLogicalId": "Logs",
            "ChangeSetId": "",
        },
        "Resources": {"Logs": {"Type": "AWS::S3::Bucket", "Properties": bucket("Enabled").properties}},
    }


def test_an_update_also_shows_the_previous_properties() -> None:
    previous = {"VersioningConfiguration": {"Status": "Enabled"}}
    document = guard_input(bucket("Suspended", "UPDATE", previous), "My::Guard::Hook")
    assert document["HookContext"]["InvocationPoint"] == "UPDATE_PRE_PROVISION"
    assert document["Previous"] == {"Logs": {"Type": "AWS::S3::Bucket", "Properties": previous}}


def test_a_delete_proposes_no_properties_and_shows_the_current_ones_as_previous() -> None:
    document = guard_input(bucket("Enabled", "DELETE"), "My::Guard::Hook")
    assert document["HookContext"]["InvocationPoint"] == "DELETE_PRE_PROVISION"
    assert document["Resources"] == {"Logs": {"Type": "AWS::S3::Bucket", "Properties": {}}}
    assert document["Previous"] == {"Logs": {"Type": "AWS::S3::Bucket", "Properties": bucket("Enabled").properties}}


def test_a_stack_target_shows_the_proposed_template_at_the_top_and_the_deployed_one_under_previous() -> None:
    template = {"Description": "app", "Resources": {"Logs": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": {"Fn::Sub": "${AWS::StackName}-b"}}}}}
    deployed = {"Resources": {"Logs": {"Type": "AWS::S3::Bucket"}}}
    given = "Description: app\nResources:\n  Logs:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Sub '${AWS::StackName}-b'\n"
    target = HookedOperation(STACK, "UPDATE", "app", STACK_TARGET, {}, operation=STACK_TARGET, model=stack_model(given, json.dumps(deployed)))
    document = guard_input(target, "My::Guard::Hook")
    assert document["Description"] == "app" and document["Resources"] == template["Resources"] and document["Previous"] == deployed
    assert document["HookContext"]["TargetName"] == "app" and document["HookContext"]["TargetType"] == "STACK"
    assert evaluate(RULES.split("rule kept")[0], document, "rules.guard").failures[0] == ("versioning", "Versioning must be Enabled")


def test_a_stack_delete_shows_no_template() -> None:
    deployed = {"Resources": {"Logs": {"Type": "AWS::S3::Bucket"}}}
    target = HookedOperation(STACK, "DELETE", "app", STACK_TARGET, {}, operation=STACK_TARGET, model=stack_model(None, json.dumps(deployed)))
    document = guard_input(target, "My::Guard::Hook")
    assert document["Previous"] == {} and "Resources" not in document
    assert managed_hook_model(target) == {} and target.model == {"previousTemplate": json.dumps(deployed)}  # a custom hook's is kept


def test_a_change_set_target_adds_its_changes_and_the_deployed_template() -> None:
    template = {"Resources": {"Logs": {"Type": "AWS::S3::Bucket", "Properties": {"VersioningConfiguration": {"Status": "Suspended"}}}}}
    change = ResourceChange("Modify", "Logs", "AWS::S3::Bucket", after=template["Resources"]["Logs"]["Properties"])
    before = {"Logs": {"VersioningConfiguration": {"Status": "Enabled"}}}
    arn = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/cs/1"
    target = HookedOperation(
        STACK, "CREATE", arn, CHANGE_SET_TARGET, {}, operation=CHANGE_SET_TARGET, model=change_set_model(json.dumps(template), [change], before),
        change_set_id=arn, previous_template=json.dumps({"Resources": {"Logs": {"Type": "AWS::S3::Bucket"}}}),
    )
    document = guard_input(target, "My::Guard::Hook")
    assert document["HookContext"]["TargetLogicalId"] == arn and document["HookContext"]["ChangeSetId"] == arn
    assert document["Previous"] == {"Resources": {"Logs": {"Type": "AWS::S3::Bucket"}}}
    assert [(c["logicalResourceId"], c["action"]) for c in document["Changes"]] == [("Logs", "UPDATE")]
    rules = """\
let changing = Changes[ resourceType == 'AWS::S3::Bucket' ]
rule stays_enabled when %changing !empty {
    let after = json_parse(%changing.afterContext)
    %after.Properties.VersioningConfiguration.Status == 'Enabled'
}
"""
    assert not evaluate(rules, document, "rules.guard").passed  # the guide's change set rule, unchanged


def test_input_parameters_add_top_level_keys_and_may_not_name_one_twice() -> None:
    document = guard_input(bucket("Enabled"), "My::Guard::Hook")
    merged = with_input_params(document, [("s3://b/a.yaml", {"Policy": {"Min": 2}}), ("s3://b/b.json", {"Owners": ["a"]})])
    assert merged["Policy"] == {"Min": 2} and merged["Owners"] == ["a"] and merged["Resources"] == document["Resources"]
    with pytest.raises(GuardInputError, match="s3://b/b.json set Policy, already set by input parameters s3://b/a.yaml"):
        with_input_params(document, [("s3://b/a.yaml", {"Policy": 1}), ("s3://b/b.json", {"Policy": 2})])
    with pytest.raises(GuardInputError, match="set Resources, already set by the hook's input"):
        with_input_params(document, [("p.yaml", {"Resources": {}})])
    with pytest.raises(GuardInputError, match="p.yaml must hold an object"):
        with_input_params(document, [("p.yaml", ["a"])])
    assert read_input_params('{"Policy": {"Min": 2}}', "p.json") == {"Policy": {"Min": 2}}
    with pytest.raises(GuardInputError, match="p.yaml are neither JSON nor YAML"):
        read_input_params("a: [b", "p.yaml")


def test_compliant_rules_pass_and_failing_ones_give_their_custom_messages_or_guards_words() -> None:
    assert evaluate(RULES, guard_input(bucket("Enabled"), "H::G::K"), "rules.guard") == GuardVerdict(True)
    untagged = guard_input(bucket("Suspended"), "H::G::K")
    del untagged["Resources"]["Logs"]["Properties"]["Tags"]
    verdict = evaluate(RULES, untagged, "rules.guard")
    assert not verdict.passed
    assert verdict.failures[0] == ("versioning", "Versioning must be Enabled")  # the custom message, its lines joined
    assert verdict.failures[1][0] == "tagged" and "Tags" in verdict.failures[1][1]  # no message of its own: Guard's
    assert verdict.reason.startswith("Rule [versioning] failed: Versioning must be Enabled; Rule [tagged] failed: ")


def test_rules_read_the_previous_properties_of_an_update() -> None:
    turned_off = guard_input(bucket("Suspended", "UPDATE", {"VersioningConfiguration": {"Status": "Enabled"}}), "H::G::K")
    assert evaluate(RULES, turned_off, "rules.guard").failures == (("versioning", "Versioning must be Enabled"), ("kept", "Versioning once Enabled stays Enabled"))


def test_rules_that_apply_to_nothing_pass() -> None:
    queue = HookedOperation(STACK, "CREATE", "Q", "AWS::SQS::Queue", {})
    assert evaluate(RULES, guard_input(queue, "H::G::K"), "rules.guard").passed
    assert evaluate("# nothing but a comment\n", {}, "rules.guard").passed


def rules_problem(rules: str, source: str, budgets: Budgets = Budgets()) -> Optional[str]:
    """Why serve would refuse these rules, evaluated as a hook evaluates them (in a process of their own); or None."""
    try:
        asyncio.run(evaluated(rules, {}, source, budgets.guard_hook()))
    except GuardError as error:
        return str(error)
    return None


def test_rules_that_cannot_be_used_are_named_with_their_source_and_where_parsing_stopped() -> None:
    assert rules_problem(RULES, "s3://b/rules.guard") is None
    assert rules_problem("rule x {\n  a == 1\n}\nrule y {\n b === 2 }", "s3://b/rules.guard") == (
        "Guard rules s3://b/rules.guard do not parse at line 5, column 6"
    )
    assert rules_problem("", "local.guard") == "Guard rules local.guard are empty"
    problem = rules_problem("rule x { a == %nowhere }", "local.guard")
    assert problem is not None and problem.startswith("Guard rules local.guard cannot be evaluated: ") and "nowhere" in problem


def test_rules_that_run_past_the_limit_are_stopped_and_say_so() -> None:
    document = {"Resources": {"Big": {"Type": "A::B::C", "Properties": {"Items": [f"item-{i:05d}" for i in range(4000)]}}}}
    rules = "let xs = Resources.*.Properties.Items[*]\nrule every_pair { %xs[*] !IN %xs }\n"
    with pytest.raises(GuardError, match=r"Guard rules big.guard did not finish within cfnrun's 30 s limit for a Guard hook's evaluation scaled by --time-scale 0.01"):
        asyncio.run(evaluated(rules, document, "big.guard", Budgets(time_scale=0.01).guard_hook()))


def test_a_report_that_is_not_guards_is_an_error_not_a_pass() -> None:
    with pytest.raises(GuardError, match="cannot read for rules r.guard"):
        read_verdict({"unexpected": True}, "r.guard")
    with pytest.raises(GuardError, match="r.guard cannot be evaluated: boom"):
        read_verdict({"tool": "guard", "success": False, "error": "boom"}, "r.guard")
    failing = {"tool": "guard", "success": True, "result": {"status": "FAIL", "not_compliant": [{"Rule": {"name": "r", "checks": []}}]}}
    assert read_verdict(failing, "r.guard") == GuardVerdict(False, (("r", "not compliant"),))


def test_rule_locations_are_s3_on_the_aws_endpoint_or_local_paths_below_the_folders_named(tmp_path: Path) -> None:
    without_endpoint = HookFiles(None, "us-east-1", tmp_path, [tmp_path / "policy"])
    assert without_endpoint.problem({"Uri": "s3://rules/a.guard"}, "RuleLocation") == (
        "RuleLocation.Uri s3://rules/a.guard is on S3: start serve with --moto (an embedded moto) or --aws-endpoint URL to read it"
    )
    assert "cfnrun reads s3://bucket/key" in str(without_endpoint.problem({"Uri": "https://example.com/a.guard"}, "RuleLocation"))
    assert without_endpoint.problem({"VersionId": "1"}, "Options.InputParams[0]") == (
        "Options.InputParams[0] must be an object with a Uri (s3://bucket/key or a local path)"
    )
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "a.guard").write_text("rule r { a == 1 }", encoding="utf-8")
    assert asyncio.run(without_endpoint.read({"Uri": "policy/a.guard"}, "RuleLocation")) == "rule r { a == 1 }"
    with pytest.raises(UnreadableFile, match=r"policy/b.guard cannot be read \(as .*policy/b.guard\): No such file"):
        asyncio.run(without_endpoint.read({"Uri": "policy/b.guard"}, "RuleLocation"))
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "c.guard").write_text("rule secret { b == 2 }", encoding="utf-8")
    for outside in ("private/c.guard", "policy/../private/c.guard", str(tmp_path / "private" / "c.guard"), "/etc/passwd"):
        with pytest.raises(UnreadableFile, match=f"RuleLocation.Uri {re.escape(outside)} is outside the folders") as refused:
            asyncio.run(without_endpoint.read({"Uri": outside}, "RuleLocation"))
        assert "secret" not in str(refused.value)
    assert without_endpoint.problem({"Uri": "policy/a\x00.guard"}, "RuleLocation") == "RuleLocation.Uri 'policy/a\\x00.guard' is not a path cfnrun can read"
    with pytest.raises(UnreadableFile, match="s3://rules does not name an object"):
        s3_object("s3://rules")
