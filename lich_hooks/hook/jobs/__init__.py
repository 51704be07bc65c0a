"""One module per job, each exposing `run(ctx) -> Outcome`; hook/outcome.py defines both types."""
