import time
from pathlib import Path
import pytest
from test_stack_state_machine import Serve, TEMPLATES, StackOperations


@pytest.mark.parametrize("delay", [0, 0.002, 0.004, 0.006, 0.008, 0.01, 0.012, 0.015, 0.02, 0.03])
def test_repl(tmp_path: Path, delay: float) -> None:
    serve = Serve(tmp_path)
    StackOperations.serve = serve
    m = StackOperations()
    cf = m.cloudformation
    cf.create_stack(StackName="alpha", TemplateBody=TEMPLATES[0])
    m._settled()
    cf.update_stack(StackName="alpha", TemplateBody=TEMPLATES[4])
    time.sleep(delay)
    serve.crash(); m._clients()
    stacks = m._settled()
    res = m.cloudformation.describe_stack_resources(StackName="alpha")["StackResources"]
    ev = m.cloudformation.describe_stack_events(StackName="alpha")["StackEvents"]
    print("RESULT", delay, [s["StackStatus"] for s in stacks], [(r["LogicalResourceId"], r["ResourceStatus"]) for r in res], "gone", m._held() - m._notes(), "leaked", m._notes() - m._held())
    print("EVENTS", [(e["LogicalResourceId"], e["ResourceStatus"]) for e in reversed(ev)][5:])
    serve.process.stop()
