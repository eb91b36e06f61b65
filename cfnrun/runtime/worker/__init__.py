"""The worker: what runs in the provider's interpreter, a warm sandbox that imports a handler once and serves calls.

It runs under any interpreter ``--python`` names (Python 3.9 or later), where cfnrun may not be
installed: its modules import the standard library and each other (relatively), nothing else,
so cfnrun's own dependencies never enter the provider's module namespace. ``runtime/spec.py``
launches it from cached bytecode as the package ``cfnrun_worker``, whose folder is not on
``sys.path``: none of these module names can hide a provider's own ``channel.py`` or ``host.py``.
cfnrun itself imports ``protocol`` and ``lambda_context``; ``--in-process`` also ``host`` and ``loading``.

The parent sets up three channels before the worker starts:
  * fd 0, one end of a Unix socket pair: requests in, replies out, as length-prefixed JSON frames;
  * fds 1 and 2, the log pipe, behind both ``sys.stdout`` and ``sys.stderr``;
  * ``--lifeline FD``, a pipe only the parent can write to: EOF means the parent is gone.

A call's way through, one module per step:
  start_worker.py         the command line: a worker, or a zygote (``--zygote``)
  handed_sandbox.py       ``--await-sandbox``: the working folder, environment and options, from the first frame
  lifeline.py             die with the parent, however it ends
  channel.py              the channel moved off fd 0 (frames in and out, for this process only), stdout and
                          stderr on the log pipe; notices when the handler broke either
  protocol.py             the frames' encoding (shared with cfnrun), and the exit status of a lost channel
  lifecycle.py            the startup frames: preload dependencies, load the handler, then serve
  debugger.py             breakpoint() without a terminal, ``--debug-port`` (debugpy)
  host.py                 ``HandlerHost``: load, call, unload a handler (also what ``--in-process`` drives)
  loading.py              import ``module.attribute``, or Lambda's init error saying why not
  code_imports.py         the code folder imported from its source as saved, never from stale bytecode
  lambda_logging.py       the root logger as Lambda sets it up, tagged with the request id
  faults.py               ``--inject``: load ``runtime/fault_hook.py`` (botocore) by its path
  serialization_watch.py  say why the support library failed a ProgressEvent it could not serialize
  tracebacks.py           the provider's frames only, and ``path:line`` as the developer reads it
  lambda_context.py       the ``context`` a handler gets, and the sandbox identity behind it
  loop.py                 ``Worker``: a request frame in, the handler called, a reply frame out
  fork_server.py          the zygote's side: dependencies imported once, a worker forked per request
"""
