"""``cfnrun fuzz``'s pure parts: models generated from the resource schema, the expected state of a
sequence of operations, the exploration with hypothesis, and the printing of a minimal case.

It depends only on model, contract and events, and runs operations through the small
``OperationRunner`` protocol (``sequence.py``): the app layer wires that protocol to the one
invoker on the one runtime, so every handler call fuzzing makes is an ordinary operation.
"""
