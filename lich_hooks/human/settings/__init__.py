"""The human side's harness knowledge: the registry, where settings live, what of ours is
in them, and how to edit them (docs/architecture.md lists the modules).

Used by the human commands; it imports nothing from `commands/`, and the hook floor
never imports it (tests/operator/test_layout.py).
"""
