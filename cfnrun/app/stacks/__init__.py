"""Local stacks on serve: the engine's provisioners and the CloudFormation API's operations."""

# The CloudFormation API operations serve answers (``stack_calls.StackOperations``); named here, where
# serve's endpoint can read them before the stacks themselves have loaded.
STACK_OPERATIONS = frozenset(
    {
        "CreateStack", "UpdateStack", "DeleteStack", "DescribeStacks", "ListStacks", "DescribeStackEvents",
        "DescribeStackResource", "DescribeStackResources", "ListStackResources", "GetTemplate", "GetTemplateSummary",
        "ValidateTemplate", "CreateChangeSet", "DescribeChangeSet", "ExecuteChangeSet", "DeleteChangeSet", "ListChangeSets",
        "ListExports", "ListImports", "DescribeType", "SetTypeConfiguration", "CancelUpdateStack", "ContinueUpdateRollback",
        "DetectStackDrift", "DescribeStackDriftDetectionStatus", "DescribeStackResourceDrifts", "DetectStackResourceDrift",
        "DescribeChangeSetHooks", "ListHookResults", "GetHookResult",
    }
)
