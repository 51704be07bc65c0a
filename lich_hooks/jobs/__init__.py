"""One module per job (SPEC §1). Each exposes `run(ctx) -> Outcome`."""
