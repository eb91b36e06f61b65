"""The names the CloudFormation API accepts for stacks and change sets; light, so the command line can check them too."""
import re
from typing import List, Optional

STACK_NAME = re.compile(r"^[a-zA-Z][-a-zA-Z0-9]{0,127}$")
CHANGE_SET_NAME = STACK_NAME  # the API's rule for both: a letter, then letters, digits and hyphens, 128 at most


def stack_name_problem(name: str) -> Optional[str]:
    """A StackName the API refuses, in its words (each constraint it fails, pattern first); None for a good one."""
    failed: List[str] = []
    if not re.fullmatch(r"[a-zA-Z][-a-zA-Z0-9]*", name):
        failed.append("Member must satisfy regular expression pattern: [a-zA-Z][-a-zA-Z0-9]*")
    if len(name) > 128:
        failed.append("Member must have length less than or equal to 128")
    if not failed:
        return None
    count = f"{len(failed)} validation error{'s' if len(failed) > 1 else ''} detected"
    return f"{count}: " + "; ".join(f"Value '{name}' at 'stackName' failed to satisfy constraint: {each}" for each in failed)
