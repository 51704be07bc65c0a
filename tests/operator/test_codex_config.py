"""doctor reads Codex's config.toml with tomllib (tomli on 3.10): the tables trust is judged
from, a multi-line string never taken for a table, and a file it rejects an error, not trust."""

from __future__ import annotations

from pathlib import Path

from lich_hooks.human.settings import codex_state

# What Codex 0.171.0 writes (plugin add, the TUI's trust dialog), plus what a
# person keeps in the same file.
CODEX_CONFIG = '''
model = "gpt-5.5"   # a comment
model_reasoning_effort = 'high'
notify = ["notify-send", "Codex"]
instructions = """
[hooks.state."not-a-table"]
trusted_hash = "fake"
"""

[projects."/home/me/proj"]
trust_level = "trusted"

[marketplaces.lich-hooks]
source_type = "local"
source = "/home/me/lich-hooks"

[plugins."lich-hooks@lich-hooks"]
enabled = true

[mcp_servers.docs]
command = "npx"
args = [
  "-y",
  ["nested"],
]
env = { "KEY" = "value" }

[[profiles.list]]
name = "x"

[tui]
screen_reader_detection_done = true

[hooks.state]

[hooks.state."lich-hooks@lich-hooks:codex-hooks.json:session_start:0:0"]
trusted_hash = "sha256:b723be33802de9093ede51f75180387579d0a2181dceb564704661ad7c8b615e"
trusted_content_hash = "sha256:a45eafc3b0edc088b369434dc5cae5283baf379172208b2425ce5ed674f4cb06"

[hooks.state."/home/me/.codex/hooks.json:session_start:0:0"]
trusted_hash = "sha256:\\u0030abc"
enabled = false

[features]
hooks = true
count = 1_000
'''


def _load(folder: Path, text: str) -> codex_state.Config:
    (folder / "config.toml").write_text(text, encoding="utf-8")
    return codex_state.Config.load({"CODEX_HOME": str(folder)})


def test_a_real_config_reads_its_tables(tmp_path: Path) -> None:
    config = _load(tmp_path, CODEX_CONFIG)
    assert config.error is None
    plugin = config.table(
        "hooks", "state", "lich-hooks@lich-hooks:codex-hooks.json:session_start:0:0"
    )
    assert set(plugin) == {"trusted_hash", "trusted_content_hash"}
    assert str(plugin["trusted_hash"]).startswith("sha256:b723be33802de909")
    assert set(config.table("hooks", "state")) == {
        "lich-hooks@lich-hooks:codex-hooks.json:session_start:0:0",
        "/home/me/.codex/hooks.json:session_start:0:0",
    }
    assert config.table("hooks", "state", "/home/me/.codex/hooks.json:session_start:0:0") == {
        "trusted_hash": "sha256:0abc",
        "enabled": False,
    }
    assert config.table("plugins") == {"lich-hooks@lich-hooks": {"enabled": True}}
    assert config.project_trusted("/home/me/proj/sub")
    assert config.table("features") == {"hooks": True, "count": 1000}
    assert not config.hooks_off()


def test_a_config_tomllib_rejects_is_an_error(tmp_path: Path) -> None:
    config = _load(tmp_path, CODEX_CONFIG + "[features]\nhooks = false\n")  # defined twice
    assert config.error is not None
    assert config.table("features") == {} and not config.hooks_off()
