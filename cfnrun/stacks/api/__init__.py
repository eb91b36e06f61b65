"""The CloudFormation API's operations on the local stacks (``operations.py``): input shapes in, output shapes out."""

# The operations serve answers (``operations.StackOperations``); named here, in a light module, where serve's
# endpoint can read them before the stacks themselves have loaded.
STACK_OPERATIONS = frozenset(
    {
        "CreateStack", "UpdateStack", "DeleteStack", "DescribeStacks", "ListStacks", "DescribeStackEvents",
        "DescribeStackResource", "DescribeStackResources", "ListStackResources", "GetTemplate", "GetTemplateSummary",
        "ValidateTemplate", "CreateChangeSet", "DescribeChangeSet", "ExecuteChangeSet", "DeleteChangeSet", "ListChangeSets",
        "ListExports", "ListImports", "DescribeType", "SetTypeConfiguration", "CancelUpdateStack", "ContinueUpdateRollback",
        "DetectStackDrift", "DescribeStackDriftDetectionStatus", "DescribeStackResourceDrifts", "DetectStackResourceDrift",
        "DescribeChangeSetHooks", "ListHookResults", "GetHookResult", "DescribeEvents", "RollbackStack",
        "CreateStackRefactor", "DescribeStackRefactor", "ExecuteStackRefactor", "ListStackRefactors", "ListStackRefactorActions",
        "DescribeAccountLimits", "EstimateTemplateCost",
        "UpdateTerminationProtection", "SetStackPolicy", "GetStackPolicy", "SignalResource", "SetAlias", "RemoveAlias",
        "StartResourceScan", "DescribeResourceScan", "ListResourceScans", "ListResourceScanResources", "ListResourceScanRelatedResources",
        "CreateGeneratedTemplate", "DescribeGeneratedTemplate", "GetGeneratedTemplate", "ListGeneratedTemplates", "UpdateGeneratedTemplate",
        "DeleteGeneratedTemplate",
    }
)
