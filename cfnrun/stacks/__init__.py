"""Local stacks: whole templates deployed on the served types' handlers and an AWS endpoint.

``template/`` reads a template the way the service does (parameters, conditions, intrinsics,
dependencies); the engine (``engine.py`` and the modules it uses) runs a stack's create, update
and delete on ``Provisioner``s the app supplies: the one invoker for the user's types, the AWS
endpoint for AWS::* types, the served functions for custom resources.
"""
