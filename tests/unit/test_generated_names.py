"""Names generated for AWS::* resources declared without one: prefix, logical id and suffix within the type's limit."""
from __future__ import annotations

import re

from cfnrun.app.stacks.generated_names import generated_name, named


def test_a_long_logical_id_is_shortened_so_the_name_fits_the_limit() -> None:
    name = generated_name("CFN", "AVeryLongLogicalIdThatGoesOnAndOnAndOn", 40)
    assert len(name) == 40
    assert re.fullmatch(r"CFN-AVeryLongLogicalIdThatG-[A-Za-z0-9]{12}", name), name


def test_only_a_type_that_needs_a_name_and_has_none_gets_one_and_a_kept_name_is_reused() -> None:
    assert named("AWS::EC2::VPC", "stack", "Vpc", {}, None) is None
    assert named("AWS::SSM::Parameter", "stack", "P", {"Name": "/given"}, None) is None
    assert named("AWS::SSM::Parameter", "stack", "P", {}, "CFN-P-abcdefghijkl") == "CFN-P-abcdefghijkl"


def test_the_longer_of_stack_name_and_logical_id_is_cut_first_and_the_same_seed_gives_the_same_name() -> None:
    name = generated_name("a-very-long-stack-name-" + "s" * 60, "Role", 64, seed="token")
    assert len(name) == 64 and name.startswith("a-very-long-stack-name-") and "-Role-" in name, name
    assert generated_name("stack", "L" * 90, 64).startswith("stack-LLL")
    assert generated_name("s", "Queue", 80, seed="t") == generated_name("s", "Queue", 80, seed="t")


def test_buckets_are_lower_case_and_fifo_queues_end_in_fifo() -> None:
    assert re.fullmatch(r"my-stack-bucket-[a-z0-9]{12}", named("AWS::S3::Bucket", "My-Stack", "Bucket", {}, None) or "")
    assert re.fullmatch(r"s-Q-[A-Z0-9]{12}\.fifo", named("AWS::SQS::Queue", "s", "Q", {"FifoQueue": "true"}, None) or "")
    assert named("AWS::SQS::Queue", "s", "Q", {"QueueName": "given"}, None) is None


def test_a_state_machine_is_named_after_its_logical_id_alone_cut_to_80() -> None:
    assert re.fullmatch(r"Flow-[A-Za-z0-9]{12}", named("AWS::StepFunctions::StateMachine", "stack", "Flow", {}, None) or "")
    long = named("AWS::StepFunctions::StateMachine", "stack", "L" * 100, {}, None) or ""
    assert len(long) == 80 and re.fullmatch(r"L{67}-[A-Za-z0-9]{12}", long), long


def test_long_names_are_cut_as_the_service_cut_the_names_users_report() -> None:
    # names the service made for a stack called ChineseboostAnalyticsStack (yulin issue 1113); the logical ids were longer
    bucket = named("AWS::S3::Bucket", "ChineseboostAnalyticsStack", "RainlyticsLogsBucket8DF4A2C1", {}, None) or ""
    assert re.fullmatch(r"chineseboostanalyticsstac-rainlyticslogsbucket8df4-[a-z0-9]{12}", bucket), bucket
    role = named("AWS::IAM::Role", "ChineseboostAnalyticsStack", "RainlyticsSummariesJobFunctionServiceRole", {}, None) or ""
    assert re.fullmatch(r"ChineseboostAnalyticsStac-RainlyticsSummariesJobFun-[A-Za-z0-9]{12}", role), role
    group = named("AWS::Logs::LogGroup", "ChineseboostAnalyticsStack", "RainlyticsSummariesJobLogs1C6CB09C", {}, None) or ""
    assert re.fullmatch(r"ChineseboostAnalyticsStack-RainlyticsSummariesJobLogs1C6CB09C-[A-Za-z0-9]{12}", group), group
    # their suffixes are mixed case (a name made from a seed is always the same)
    seeded = [named(t, "s", "L", {}, None, seed="seed") or "" for t in ("AWS::IAM::Role", "AWS::IAM::User", "AWS::Logs::LogGroup")]
    assert all(any(c.islower() for c in name[-12:]) for name in seeded), seeded
