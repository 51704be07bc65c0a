"""The human side's harness knowledge: the registry, where settings live, what of ours is
in them, and how to edit them.

- harnesses.py  the registry: one entry per harness (its kind, file per scope, finder,
                next steps, demo scenarios); every list a person sees is read from it
- kinds.py      the two kinds behind one interface: a settings file with command hooks,
                a module file (opencode, omp); plan, apply, what runs, duplicates
- locations.py  each harness's configuration folder, from one environ
- ours.py       which entries are ours (by their command) and the merge in and out
- jsontext.py   the JSON(C) text editor that keeps every byte we do not change
- modules.py    the module files' text: template, marker, the lich-hook they run
- discovery.py  every settings and plugin file a harness reads, found in one walk, and
                what stops the harness running ours there
- claude_plugins.py, codex_state.py  the harnesses' own records: installed and enabled
                plugins, hook trust (what `doctor` must not guess from folders)
- tomlfile.py   config.toml: tomllib, or a small reader of doctor's tables on 3.10
- files.py      reading (regular files only, one size limit) and replacing a settings file
                while keeping its owner and mode
- install_record.py  the containers install created in a settings file, so uninstall puts
                back exactly what install found
- scenarios.py  what `demo` runs for each harness

Used by the human commands (install, uninstall, doctor, demo); it imports
nothing from `commands/`, and nothing here runs on a hook's path.
"""
