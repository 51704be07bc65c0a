"""Support for driving the real Claude Code and Codex CLIs offline, against scripted models."""
