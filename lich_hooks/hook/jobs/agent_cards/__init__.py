"""Agent cards (docs/agent-cards.md): Claude Code subagents as lich cards."""
