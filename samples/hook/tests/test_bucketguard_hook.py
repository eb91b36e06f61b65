"""The bucket guard hook, driven through cfnrun's pytest plugin (the `cfnrun` fixture).

Run from the sample's folder:  pytest tests/
Each invocation point runs like `cfnrun invoke`: IN_PROGRESS replayed (on the virtual clock
here), budgets enforced, the hook contract checked.
"""
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BUCKET = "AWS::S3::Bucket"
AES256 = {"ServerSideEncryptionConfiguration": [{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}


def test_an_encrypted_bucket_passes_after_one_in_progress_round(cfnrun):
    guard = cfnrun.provider(PROJECT, virtual_clock=True, contract="strict")
    verdict = guard.invoke("preCreate", {"BucketName": "logs", "BucketEncryption": AES256}, target=BUCKET)
    assert verdict.status == "SUCCESS" and verdict.invocations == 2 and not verdict.violations


def test_the_type_configuration_decides_the_algorithm(cfnrun):
    guard = cfnrun.provider(PROJECT, virtual_clock=True, typeconfig={"EncryptionAlgorithm": "aws:kms"})
    verdict = guard.invoke("CREATE_PRE_PROVISION", {"BucketName": "logs", "BucketEncryption": AES256}, target=BUCKET)
    assert (verdict.status, verdict.error_code) == ("FAILED", "NonCompliant")


def test_protected_buckets_stay_and_other_targets_are_refused(cfnrun):
    guard = cfnrun.provider(PROJECT, contract="strict")
    protected = {"BucketName": "archive", "Tags": [{"Key": "cfnrun:protected", "Value": "true"}]}
    assert guard.invoke("preDelete", protected, target=BUCKET).error_code == "NonCompliant"
    assert guard.invoke("preDelete", {"BucketName": "scratch"}, target=BUCKET).status == "SUCCESS"
    policy = guard.invoke("preUpdate", {"Bucket": "logs"}, previous={"Bucket": "logs"}, target="AWS::S3::BucketPolicy")
    assert (policy.status, policy.error_code, policy.violations) == ("FAILED", "UnsupportedTarget", [])
