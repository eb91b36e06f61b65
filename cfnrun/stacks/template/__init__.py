"""A CloudFormation template's meaning, as the service gives it, for local stacks: pure functions, no I/O.

``loading`` (text → checked ``StackTemplate``, via ``declarations`` and ``transforms``),
``parameters`` and ``parameter_types`` (the values of an operation), ``pseudo``, ``conditions``,
``intrinsics`` (``resolve``), ``dependencies`` (graph and orders), ``policies``, and ``lint``
(cfn-lint, the one part that imports a heavy library, lazily). Errors are ``TemplateError``.
"""
