"""The small TOML reader doctor uses on Python 3.10 agrees with tomllib where it answers."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.human.settings import codex_state, tomlfile

tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else None
pytestmark = pytest.mark.skipif(tomllib is None, reason="needs tomllib to compare with")

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


def _read_tables(document: dict[str, object]) -> dict[str, object]:
    """The tables doctor reads, as codex_state.Config sees them."""
    config = codex_state.Config("config.toml", document)
    return {
        "state": config.table("hooks", "state"),
        "plugins": config.table("plugins"),
        "projects": config.table("projects"),
        "features": config.table("features"),
    }


def test_a_real_config_reads_the_same() -> None:
    assert tomllib is not None
    simple = tomlfile.read_simple(CODEX_CONFIG)
    assert _read_tables(simple) == _read_tables(tomllib.loads(CODEX_CONFIG))
    assert "not-a-table" not in json.dumps(simple)  # a multi-line string is skipped whole


_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='"\\'), max_size=12
)
_key = st.text("abcXYZ019_-:./@ ", min_size=1, max_size=20)
_value = st.one_of(st.booleans(), _text, st.integers(-(10**6), 10**6))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["hooks.state", "plugins", "projects", "features"]),
        st.dictionaries(
            _key, st.dictionaries(st.sampled_from(["trusted_hash", "enabled"]), _value), max_size=3
        ),
        max_size=4,
    )
)
def test_generated_tables_read_the_same(tables: dict[str, dict[str, dict[str, object]]]) -> None:
    assert tomllib is not None
    lines = []
    for prefix, entries in tables.items():
        for name, pairs in entries.items():
            lines.append(f"[{prefix}.{json.dumps(name)}]")
            for key, value in pairs.items():
                lines.append(f"{key} = {json.dumps(value)}")
    text = "\n".join(lines) + "\n"
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # e.g. a table defined twice: Codex would not start either
    assert _read_tables(tomlfile.read_simple(text)) == _read_tables(expected)
