"""Harness settings: where they live, what of ours is in them, and how to edit them.

- harnesses.py  the harness table: titles, shipped files, settings locations per scope
- ours.py       which entries are ours (by their command) and the merge in and out
- jsontext.py   the JSON(C) text editor that keeps every byte we do not change
- discovery.py  every settings and plugin file a harness reads, found in one walk, and
                what stops the harness running ours there
- claude_plugins.py, codex_state.py  the harnesses' own records: installed and enabled
                plugins, hook trust (what `doctor` must not guess from folders)
- tomlfile.py   config.toml: tomllib, or a small reader of doctor's tables on 3.10
- files.py      reading (regular files only, one size limit) and replacing a settings file
                while keeping its owner and mode
- install_record.py  the containers install created in a settings file, so uninstall puts
                back exactly what install found

Used by the human commands (install, uninstall, doctor, demo); it imports
nothing from `commands/`, and nothing here runs on a hook's path.
"""
