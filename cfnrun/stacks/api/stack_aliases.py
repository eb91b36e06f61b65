"""``SetAlias`` and ``RemoveAlias``: a second name for a stack, usable wherever a call takes ``StackName``.

What botocore's model documents (cloudformation 2010-05-15, botocore 1.44): an alias resolves to its
stack in any call that accepts ``StackName`` (``StackStore.find``), leaves the stack's ARN, resources and
name as they are, and DescribeStacks shows it as ``AliasName``; a stack has one at most; an alias is
unique in the account and Region, matching no stack's name and no other alias; it holds alphanumerics
and hyphens, starts with a letter and is 128 characters at most. Inferred (the model gives no words):
the refusals' texts, which error each case raises (``AlreadyExistsException`` for a name in use,
``LimitExceededException`` for a second alias, ``ValidationError`` otherwise), that a CreateStack
named as an alias is refused as a taken stack name is, and that a deleted stack's alias is free again.
"""
from __future__ import annotations

import re
from typing import Any, Awaitable, Callable, Dict

from cfnrun.stacks.store import StackError, StackStore

Operation = Callable[[Dict[str, Any]], Awaitable[Dict[str, Any]]]
ALIAS_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,127}")


class StackAliases:
    """The alias operations, by name (``StackOperations`` answers them)."""

    def __init__(self, store: StackStore) -> None:
        self.store = store

    def operations(self) -> Dict[str, Operation]:
        return {"SetAlias": self.set_alias, "RemoveAlias": self.remove_alias}

    async def set_alias(self, params: Dict[str, Any]) -> Dict[str, Any]:
        alias = str(params["AliasName"])
        if not ALIAS_PATTERN.fullmatch(alias):
            raise StackError(
                f"Alias [{alias}] is not valid: an alias contains only alphanumeric characters and hyphens, "
                "starts with an alphabetic character and is at most 128 characters long"
            )
        stack = self.store.get(params["StackName"])
        if stack.alias_name == alias:
            return {}
        taken = self.store.find(alias)
        if taken is not None:
            what = "a stack's name" if taken.name == alias else "the alias of another stack"
            raise StackError(f"Alias [{alias}] already exists: it is {what}", "AlreadyExistsException")
        if stack.alias_name is not None:
            raise StackError(
                f"Stack [{stack.name}] already has the alias [{stack.alias_name}]: remove it with RemoveAlias first", "LimitExceededException"
            )
        stack.alias_name = alias
        self.store.save(stack)
        return {}

    async def remove_alias(self, params: Dict[str, Any]) -> Dict[str, Any]:
        alias = str(params["AliasName"])
        stack = self.store.find(alias)
        if stack is None or stack.alias_name != alias:
            raise StackError(f"Alias [{alias}] does not exist")
        stack.alias_name = None
        self.store.save(stack)
        return {}
