"""Local stacks on serve: the adapters that reach outside (user types through the one invoker, AWS::* types on the
endpoint, custom resources, hooks) and ``local_stacks``, the one function that composes them with ``cfnrun.stacks``."""
