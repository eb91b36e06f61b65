"""Guard rules evaluated in a child process, within a time limit: rules that run long never stop serve.

The Guard library holds the interpreter's lock while it evaluates, so in one of serve's threads a
rule that runs for a minute (a comparison of every item with every other, over a large template)
would stop every API for that minute, and nothing could stop it. Here each evaluation runs in a
process of its own (``python -m cfnrun.stacks.guard_process``: the rules, the document and where the
rules came from on its stdin, the verdict or the error on its stdout). Past ``limit`` the process is
killed and the evaluation is a GuardError saying so; serve stopping kills it too. A process costs
about 60 ms more than a thread (measured 2026-11-26), once per hook and target.
"""
from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Dict

from cfnrun.model.budgets import Budget
from cfnrun.stacks.guard_rules import GuardError, GuardVerdict, evaluate


async def evaluated(rules: str, document: Dict[str, Any], source: str, limit: Budget) -> GuardVerdict:
    """``guard_rules.evaluate`` in a child process; GuardError when it fails, or when it runs past ``limit``."""
    request = json.dumps({"rules": rules, "document": document, "source": source}, default=str).encode()
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", __name__, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(request), timeout=limit.seconds)
    except asyncio.TimeoutError:
        raise GuardError(f"Guard rules {source} did not finish within {limit.describe()}: the evaluation was stopped") from None
    finally:
        if child.returncode is None:  # past the limit, or serve is stopping: the evaluation ends with it
            child.kill()
            await child.wait()
    try:
        answer = json.loads(out)
    except ValueError:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise GuardError(f"Guard could not evaluate rules {source}: its process ended ({child.returncode}): {last}") from None
    if "error" in answer:
        raise GuardError(str(answer["error"]))
    return GuardVerdict(bool(answer["passed"]), tuple((str(rule), str(message)) for rule, message in answer["failures"]))


def _main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    try:
        verdict = evaluate(request["rules"], request["document"], request["source"])
    except GuardError as error:
        json.dump({"error": str(error)}, sys.stdout)
        return
    json.dump({"passed": verdict.passed, "failures": [list(failure) for failure in verdict.failures]}, sys.stdout)


if __name__ == "__main__":
    _main()
