"""A stand-in for lich's listener, on loopback: `listen`, `demo` and the tests judge requests by one
set of rules, lich's (checked against its vectors/*.jsonl)."""

# doctor's probe carries it, so `listen` tells a probe from a broken report (lich ignores it).
PROBE_HEADER = "X-Lich-Hook-Probe"
