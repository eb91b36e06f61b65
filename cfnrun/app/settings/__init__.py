"""Every command's options, each declared once (``app/options.py`` says what is derived from them), one module
per command family: ``invoke``; ``serve`` (and ``test``, the suite against an embedded serve); ``history`` (and
``replay``); ``validate``; ``common`` holds the options several of them share.

``InvokeSettings`` is both ``cfnrun invoke``'s options and the settings the operation runs with; the other
commands' options build the settings their command runs with (``ServeOptions.runtime``...). Adding an option
to a command is one field in its family's module plus the code that uses it: the command line, the early
start, history and replay follow from the field.

Light on purpose, like ``app/options.py``: the early start reads invoke's or serve's module before the command
line library loads (and only that family's), so what the settings turn into (budgets, runtime settings) is
imported where it is built. No ``from __future__ import annotations`` in these modules: the command line reads
the fields' types.
"""
