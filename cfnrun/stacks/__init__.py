"""Local stacks: whole CloudFormation templates run against the served types' handlers and AWS::* on moto.

``template/`` is the pure semantics of a template (decoding, parameters, conditions, intrinsic
functions, dependencies, transforms, lint); the stack engine drives handlers with it.
"""
