"""The ``cfnresponse`` module Lambda gives inline (``ZipFile``) Python code: ``send`` PUTs a custom resource's answer.

Written for cfnrun from the module's documented interface (the AWS CloudFormation User Guide,
"cfn-response module"): ``SUCCESS``/``FAILED`` and
``send(event, context, responseStatus, responseData, physicalResourceId=None, noEcho=False, reason=None)``.
"""
import json
import urllib.request

SUCCESS = "SUCCESS"
FAILED = "FAILED"


def send(event, context, responseStatus, responseData, physicalResourceId=None, noEcho=False, reason=None):
    stream = getattr(context, "log_stream_name", "cfnrun")
    body = {
        "Status": responseStatus,
        "Reason": reason or "See the details in CloudWatch Log Stream: " + stream,
        "PhysicalResourceId": physicalResourceId or stream,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "NoEcho": noEcho,
        "Data": responseData,
    }
    data = json.dumps(body).encode()
    request = urllib.request.Request(event["ResponseURL"], data=data, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(data))})
    try:
        with urllib.request.urlopen(request) as response:
            print("Status code:", response.status)
    except Exception as error:  # as the module does: report, never raise into the handler
        print("send(..) failed executing request: " + str(error))
