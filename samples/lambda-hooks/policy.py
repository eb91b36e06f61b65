"""The Lambda hook of docs/guides/lambda-hooks.md: every AWS::S3::Bucket must keep versioning Enabled."""


def versioning(event, context):
    data = event["requestData"]
    properties = data["targetModel"].get("resourceProperties") or {}  # the proposed properties: empty on a delete
    status = (properties.get("VersioningConfiguration") or {}).get("Status", "not set")
    if data["targetName"] != "AWS::S3::Bucket" or status == "Enabled":
        return {"hookStatus": "SUCCESS", "message": "versioning is Enabled"}
    return {
        "hookStatus": "FAILED",
        "errorCode": "NonCompliant",
        "message": f"Bucket {data['targetLogicalId']} must have versioning Enabled, not {status}",
    }
