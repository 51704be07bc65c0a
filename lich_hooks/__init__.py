"""lich-hooks: the hook command that connects coding-agent CLIs to lich.

Kept import-free on purpose: every hook run imports this package, and the no-op paths must cost next
to nothing (docs/performance.md)."""

__version__ = "0.1.0"

# The lich-plugin contract release this package implements. lich reads it from
# the X-Lich-Plugin header to decide compatibility, so it moves only when the
# contracts in lich_hooks/human/standin/vectors/ move, never with our own version.
PLUGIN_RELEASE = "0.20.0"
