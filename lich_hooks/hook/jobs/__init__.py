"""One module per job, each exposing `run(ctx) -> Outcome`; job.py defines both types."""
