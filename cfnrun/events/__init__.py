"""The event vocabulary: what operations report, and its one JSON encoding (``--json``, history, later APIs).

Below the feature packages (invoker, ui, history, api) and above contract, runtime and model:
it imports none of the features, so each of them can speak events without importing another.
"""
