"""Agent cards (SPEC §6): Claude Code subagents as lich cards."""
