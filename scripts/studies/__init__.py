"""The studies of memcap's report, one folder each (README.md here: what a folder holds and the
protocol its section module follows).

SECTIONS is REPORT.md's order: the main job's parts (frontier, reproduce, essay) and the studies,
each the name of a folder here; "" is a blank line between two sections (where the report has
always had one). Adding a study: its folder, and its name in this list."""

SECTIONS = [
    "frontier",
    "modern",
    "streams",
    "deep",
    "bits",
    "reproduce",
    "essay",
    "chains",
    "abstention",
    "hybrids",
    "",
    "learned_keys",
    "mqar",
    "trained",
    "kv",
]
