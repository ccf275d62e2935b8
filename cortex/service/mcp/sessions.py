"""The MCP tools of the sessions domain: what an agent's work leaves (its end, its tasks, its transcripts, the
memories it used)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from cortex import notices
from cortex.model import CaptureReport, Memory, WrittenMemory
from cortex.service.mcp.context import WRITES, ToolContext, tool
from cortex.service.mcp.outputs import Agent, MemoriesOutput


class SessionsTools(ToolContext):
    """The tools of what an agent's work leaves."""

    @tool("agent_end", WRITES)
    def agent_end(
        self,
        agent: Agent,
        output: Annotated[str, Field(description="What the agent wrote: its LEARNED:, PATTERN:, CONVENTION:, "
                                                 "DECISION: and INSIGHT: lines (upper case, at a line start) are kept, "
                                                 "and 'SUPERSEDES <id>: text' replaces memory <id> by text")],
        ctx: Context,
        project: Annotated[str | None, Field(description="Project of the captured memories")] = None,
    ) -> MemoriesOutput:
        """Capture the marker lines of an agent's output as memories (a line already stored is refreshed, not
        stored twice), then prune the agent's memories by its prune rule: `warnings` says what was deleted."""
        with self.calling(ctx, agent) as cx, notices.collect() as notes:
            memories = cx.agent_end(agent, output, project)
        return MemoriesOutput(memories=memories, warnings=notes)

    @tool("record_task", WRITES)
    def record_task(
        self,
        agent: Agent,
        task: Annotated[str, Field(description="What the task was")],
        ctx: Context,
        output: Annotated[str, Field(description="What you wrote at its end: the result, or what went wrong "
                                                 "(kept bounded)")] = "",
        status: Annotated[Literal["ok", "failed"], Field(description="How it ended")] = "ok",
        project: Annotated[str | None, Field(description="Project it belongs to")] = None,
    ) -> WrittenMemory:
        """Record a finished task's outcome as a memory (source task_completion, kept 7 days by default). Record
        failures too, with what went wrong: the next agent starting a similar task sees it."""
        with self.calling(ctx, agent) as cx, notices.collect() as notes:
            memory = cx.record_task(agent, task, output, status, project=project)
        return WrittenMemory.of(memory, notes)

    @tool("capture_transcript", WRITES)
    def capture_transcript(
        self,
        agent: Agent,
        path: Annotated[str, Field(description="The transcript file on this machine: Claude Code JSONL, a Codex "
                                               "CLI session file, a JSON list of messages, or plain text")],
        ctx: Context,
        format: Annotated[Literal["claude", "codex", "cursor", "gemini", "messages", "text"] | None,
                          Field(description="Default: detected from the file")] = None,
        project: Annotated[str | None, Field(description="Project the memories belong to")] = None,
        summary: Annotated[bool, Field(description="With a language model: store a session summary")] = True,
        dry_run: Annotated[bool, Field(description="Report what it would store, confirm and supersede; write "
                                                   "nothing")] = False,
    ) -> CaptureReport:
        """Capture what a session transcript holds since its last capture: marker lines (LEARNED: ...), with a
        language model (CORTEX_LLM_URL) learnings and a session summary, the outcomes of subagent tasks, and
        which shown memories the session used. Secrets are redacted, duplicates confirmed rather than stored;
        running it again stores nothing new. Its report's run is what undo_capture takes; dry_run reports what it
        would do and writes nothing."""
        with self.calling(ctx, agent) as cx:
            with self.caller_of(ctx).reading(path, cx):
                return cx.capture_transcript(agent, path, format=format, project=project, summary=summary,
                                             dry_run=dry_run)

    @tool("record_use", WRITES)
    def record_use(
        self,
        agent: Agent,
        output: Annotated[str, Field(description="What you wrote and did since your memory block was shown")],
        ctx: Context,
        session: Annotated[str | None, Field(description="The session whose start showed the block (default: "
                                                         "this connection's)")] = None,
    ) -> list[Memory]:
        """Tell Cortex which of the memories shown to you at start your work drew on (it matches your output
        against them): they rank higher next time than memories that were merely shown."""
        with self.calling(ctx, agent) as cx:
            return cx.record_use(agent, output, session=session)
