"""Looking a name up in a table of presets or GPUs, with aliases and close-match hints."""

from __future__ import annotations

from sizing.validate import UnknownName, show


def lookup(name: str, table: dict, aliases: dict, what: str, listing: str, cutoff: float = 0.6, typed=None):
    """table[name] after normalising and resolving aliases; else UnknownName (a SizingError
    that is also a KeyError) naming the value as typed (`typed`, when the caller normalised
    `name` first) and the closest valid names (`unknown gpu 'a200'; did you mean a100?`)."""
    if not isinstance(name, str):
        raise UnknownName(f"{what} ({show(name)}) must be a name ({listing})")
    key = name.strip().lower()
    key = aliases.get(key, key)
    if key in table:
        return table[key]
    import difflib  # only for an unknown name: the close matches it names

    close = difflib.get_close_matches(key, list(table) + list(aliases), n=3, cutoff=cutoff)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownName(f"unknown {what} {show(name if typed is None else typed)}{hint} ({listing})")
