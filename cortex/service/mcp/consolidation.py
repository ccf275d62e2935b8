"""The MCP tools of the consolidation domain: consolidation runs and their undo, the contradictions left for
review, a team's round end."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from cortex.consolidation.report import ConsolidationReport, ReviewItem, RunInfo, TeamRound, UndoReport
from cortex.service.mcp.context import READ_ONLY, UNDOES, WRITES, ToolContext, tool
from cortex.service.mcp.outputs import ConsolidatedAgent, ConsolidatedSwarm, ConsolidatedTeam


class ConsolidationTools(ToolContext):
    """The tools of consolidation."""

    def consolidating(self, ctx: Context, agent: str | None, team: str | None, swarm: bool) -> str | None:
        """The agent a consolidation tool names, once the caller may: its own agent for an agent token, a team's
        or the swarm's memory for an admin or a lead of it (:meth:`Principal.require_consolidation`)."""
        return self.caller_of(ctx).require_consolidation(agent, team, swarm, self.backend().describe_agents)

    @tool("consolidate", WRITES)
    def consolidate(
        self,
        ctx: Context,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
        dry_run: Annotated[bool, Field(description="Only say what the run would do; write nothing")] = False,
    ) -> ConsolidationReport:
        """Consolidate one memory (an agent's own, a team's or the swarm's) in one run: near duplicates merged into
        one, contradictions found by the language model superseded or listed for review, the agent's recent
        sessions distilled into learnings. Never deletes; `run` in the report is the id undo_consolidation takes.
        An agent token consolidates its own agent; a team's or the swarm's memory needs an admin or a lead."""
        with self.tool_errors():
            name = self.consolidating(ctx, agent, team, swarm)
            return self.backend().consolidate(name, team=team, swarm=swarm, dry_run=dry_run)

    @tool("team_round_end", WRITES)
    def team_round_end(
        self,
        team: Annotated[str, Field(description="The team whose round ended")],
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Only say what it would do; write nothing")] = False,
    ) -> ConsolidationReport:
        """The end of a team's round: its lead's extractor distils the round's task outcomes and the members' new
        learnings into the team memory (decisions, lessons, members, context; updated, confirmed, the least
        valuable evicted over the bound). Needs a language model; one run, undone like any other. An admin or a
        lead of the team."""
        with self.tool_errors():
            self.consolidating(ctx, None, team, False)
            return self.backend().team_round_end(team, dry_run=dry_run)

    @tool("team_round", READ_ONLY)
    def team_round(
        self,
        team: Annotated[str, Field(description="The team")],
        ctx: Context,
    ) -> TeamRound:
        """A team's current round: since its last round end, what each member stored (task outcomes and
        learnings), what the next round end will distil. A lead of the team sees every member, another member
        only itself."""
        with self.tool_errors():
            return self.backend().team_round(team)

    @tool("undo_consolidation", UNDOES)
    def undo_consolidation(
        self,
        ctx: Context,
        run: Annotated[str, Field(description="The run's id as consolidate reported it (e.g. "
                                              "20261124T190501-3fa9c2), or 'last'")] = "last",
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
        force: Annotated[bool, Field(description="Undo even when a memory changed since the run (those changes "
                                                 "are lost)")] = False,
    ) -> UndoReport:
        """Undo a consolidation run exactly: every memory it changed back as it was, the memories it created
        removed; its record stays, marked undone. Refused (nothing changed) when a memory changed since, unless
        force. Who may: as for consolidate."""
        with self.tool_errors():
            name = self.consolidating(ctx, agent, team, swarm)
            return self.backend().undo_consolidation(run, agent=name, team=team, swarm=swarm, force=force)

    @tool("consolidation_runs", READ_ONLY)
    def consolidation_runs(
        self,
        ctx: Context,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
    ) -> list[RunInfo]:
        """The consolidation runs of one memory (an admin naming none: of every memory), the latest first, with
        what each changed and whether it was undone. Who may: as for consolidate."""
        with self.tool_errors():
            name = self.consolidating(ctx, agent, team, swarm)
            return self.backend().consolidation_runs(name, team=team, swarm=swarm)

    @tool("review", READ_ONLY)
    def review_contradictions(
        self,
        ctx: Context,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
    ) -> list[ReviewItem]:
        """The review queue: the contradictions consolidation found and left for review, still open (both memories
        current), and the memories held for review (kind "held": what an automatic channel would have written
        where it reaches other agents, with its origin and why it was held). Decide one with
        resolve_contradiction. Who may: as for consolidate, and a lead the queue of a member of its teams."""
        with self.tool_errors():
            name = self.caller_of(ctx).require_review(agent, team, swarm, self.backend().describe_agents)
            return self.backend().review(name, team=team, swarm=swarm)

    @tool("review_all", READ_ONLY)
    def review_all(self, ctx: Context) -> list[ReviewItem]:
        """Every item the caller may review, of every queue at once (each names its scope): an admin token every
        declared agent's, every team's with a lead and the swarm's; an agent token its own agent's, and a lead's
        besides the queues of the teams it leads, the swarm's and the memories held in its teams' members'
        memory. Decide one with resolve_contradiction."""
        with self.tool_errors():
            return self.backend().review_all()

    @tool("resolve_review", WRITES)
    def resolve_contradiction(
        self,
        keep: Annotated[str, Field(description="The memory the contradiction keeps, or the held memory's id, as "
                                               "review_contradictions lists it")],
        ctx: Context,
        supersede: Annotated[str, Field(description="The memory the contradiction supersedes, as "
                                                    "review_contradictions lists it (empty for a held memory)")] = "",
        accept: Annotated[bool, Field(description="true: supersede it by keep (a held memory: approve and write "
                                                  "it); false: keep both, and take the pair off the list (a held "
                                                  "memory: reject it)")] = True,
        agent: ConsolidatedAgent = None,
        team: ConsolidatedTeam = None,
        swarm: ConsolidatedSwarm = False,
    ) -> ConsolidationReport:
        """Decide an item review_contradictions lists: a contradiction (accept supersedes `supersede` by `keep`,
        accept=false keeps both and takes the pair off the list) or a held memory (`keep` its id, no `supersede`:
        accept approves and writes it, accept=false rejects it). Each is a run of its own (kind review, `run` in
        the report), undone with undo_consolidation like any other. Who may: as for consolidate."""
        with self.tool_errors():
            name = self.consolidating(ctx, agent, team, swarm) if supersede else \
                self.caller_of(ctx).require_held_decision(agent, team, swarm, self.backend().describe_agents)
            return self.backend().resolve_review(keep, supersede, accept=accept, agent=name, team=team, swarm=swarm)
