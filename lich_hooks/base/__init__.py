"""Stdlib only: what the hook and the human commands both read.

Imports nothing above it (docs/architecture.md)."""
