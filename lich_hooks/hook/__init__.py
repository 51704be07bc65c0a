"""The hot path: what a harness runs. Imports base/ only, never human/ (docs/architecture.md)."""
