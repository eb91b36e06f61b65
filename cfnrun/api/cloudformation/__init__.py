"""The CloudFormation API (AWS query protocol, XML answers) on serve's port: the wire only.

Requests are read and answers written from botocore's own service model of ``cloudformation``
2010-05-15, so every operation's parameters, errors and output shapes are the ones boto3 and
the aws CLI use; the stack engine behind ``StackService`` sees plain dicts shaped as the model's
input and returns dicts shaped as its output.
"""
