"""cfnrun: run and check CloudFormation resource type handlers written in Python, locally."""

__version__ = "0.1.0"
