"""The cheapest possible handler: the floor every runtime overhead is measured against."""


def handler(event, context):
    return {"status": "SUCCESS"}
