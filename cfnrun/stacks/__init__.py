"""Local stacks: a stack operation end to end, from the CloudFormation API's input shapes to its provisioners.

``api/`` answers each API operation; ``store.py`` checks it and starts it; ``template/`` reads a
template the way the service does; ``blueprint.py`` makes the operation's blueprint; ``plan.py``
decides what happens to each resource, ``engine.py`` carries that out on the ``Provisioner``s the
app supplies: the one invoker for the user's types, the AWS endpoint for AWS::* types, the served
functions for custom resources.
"""
