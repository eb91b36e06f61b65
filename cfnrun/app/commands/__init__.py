"""What each command does with the settings the command line built: what it prints and the status it exits with.

cli.py parses the options into the command's settings (``app/settings/``) and hands them to
the ``run`` of the module named after the command here; the work itself is done by the
modules these call (``app/invoke.py``, ``app/serve.py``, ``app/replay.py``...).
"""
