"""The block of agent_start on a recorded set of reviewer tasks, run 5 rounds (docs/agents.md): how many
lines matched only the agent's role words, whether the task's memory came first, whether a confident general
memory was shown, and whether showing changed later blocks. `python bench/block_feedback.py [LIMIT]` (default 5)."""
import sys
import tempfile
from pathlib import Path
from cortex import Cortex
TASKS = {
    "Review the retry change in the HTTP client": "HTTP client retries back off exponentially",
    "Review the SQL migration for the orders table": "SQL migrations must be reversible",
    "Review the new login form": "Login forms rate-limit by IP",
    "Review the parser refactor": "The parser keeps a recursion limit of 200",
    "Please review the cache invalidation code": "Cache keys include the schema version",
    "Review changes to the billing webhook": "Billing webhooks are idempotent by event id",
}
NOISE = ["Changes reviewed by hand get a second reader", "Reviews by hand take a day",
         "Code changes need a changelog line", "Review comments go in the PR, not chat"]
LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 5
GENERAL = "Never merge on Fridays"
with tempfile.TemporaryDirectory() as d:
    cx = Cortex.open(Path(d) / "store", embeddings=None)
    cx.agents.register("reviewer", description="Reviews code changes by hand")
    cx.store_many("reviewer", [{"content": c} for c in [*TASKS.values(), *NOISE]])
    cx.store("reviewer", GENERAL, confidence=0.95)
    rounds = 5
    noise_lines = total_lines = relevant_first = general_in = 0
    changed = 0
    first = {}
    per_round = []
    for r in range(rounds):
        per_round.append(0)
        for task, relevant in TASKS.items():
            block = cx.agent_start("reviewer", task=task, limit=LIMIT)
            lines = block.splitlines()[1:-1]
            total_lines += len(lines)
            noise_lines += sum(any(n in l for n in NOISE) for l in lines)
            relevant_first += bool(lines) and relevant in lines[0]
            per_round[-1] += bool(lines) and relevant in lines[0]
            general_in += GENERAL in block
            if r == 0: first[task] = block
            elif block != first[task]: changed += 1
    n = rounds * len(TASKS)
    print(f"{n} blocks: role-word-only lines {noise_lines}/{total_lines}; task memory first {relevant_first}/{n}; "
          f"confident general memory shown {general_in}/{n}; blocks changed after round 1: {changed}/{n - len(TASKS)}; "
          f"task memory first, by round: {per_round}")
    # after those rounds, a memory more relevant to a new task than the one shown 5 times: which comes first?
    cx.store("reviewer", "HTTP client timeout handling: timeouts are 30 s per call")
    block = cx.agent_start("reviewer", task="Review the HTTP client timeout handling", limit=LIMIT)
    print("new task, the more relevant unshown memory first:", "timeouts are 30 s" in block.splitlines()[1])
    cx.close()
