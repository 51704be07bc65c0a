"""The human side's harness knowledge (docs/architecture.md lists the modules)."""
