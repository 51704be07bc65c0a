"""A stand-in for lich's listener: the same validation lich applies, on loopback.

Used by `lich-hook listen`, `lich-hook demo` and the test suite, so all three judge requests by one
set of rules (checked against vectors/*.jsonl, lich's own)."""

# The header `lich-hook doctor` marks its probe with, so `listen` can tell a probe
# from a broken report (lich itself ignores it).
PROBE_HEADER = "X-Lich-Hook-Probe"
