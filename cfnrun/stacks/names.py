"""The names the CloudFormation API accepts for stacks and change sets; light, so the command line can check them too."""
import re

STACK_NAME = re.compile(r"^[a-zA-Z][-a-zA-Z0-9]{0,127}$")
CHANGE_SET_NAME = STACK_NAME  # the API's rule for both: a letter, then letters, digits and hyphens, 128 at most
