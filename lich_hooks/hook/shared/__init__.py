"""Attribution under a shared process: one core, Codex's daemon and Crush's server beside it."""
