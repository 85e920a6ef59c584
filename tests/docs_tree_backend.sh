#!/usr/bin/env bash
# docs/extending.md, "In the tree", lists every method a backend in the table implements: each
# virtual method of `Memory` (memories/memory.hpp) is named there, and — because the table
# declares every entry able to hold reduced precision (memories/registry.cpp) — `mutable_state`
# is said to be required of it. A method added to Memory, or a trait the table gives every
# entry, without the page saying so fails here.
# usage: docs_tree_backend.sh SOURCE_DIR
set -u
src=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The section: from "## In the tree" to the next "## ".
section=$(awk '/^## In the tree/{on=1; next} /^## /{on=0} on' "$src/docs/extending.md")
[[ -n $section ]] || { echo "FAIL: docs/extending.md has no section '## In the tree'"; exit 1; }

# Virtual methods of class Memory (the destructor aside), from its declaration to the closing brace.
methods=$(awk '/^class Memory \{/{on=1} on && /^\};/{on=0} on' "$src/memories/memory.hpp" |
          grep -oE 'virtual [^(]*[ *&]([a-z_]+)\(' | sed -E 's/.*[ *&]([a-z_]+)\($/\1/' | sort -u)
[[ $(wc -w <<<"$methods") -ge 5 ]] || { echo "FAIL: found too few virtual methods in memories/memory.hpp: $methods"; exit 1; }
for m in $methods; do
    if grep -qE "\`$m\(" <<<"$section"; then echo "ok   $m"; else fail "docs/extending.md (In the tree) does not name \`$m(\`"; fi
done

# Every table entry is declared reduced_precision: the page must say mutable_state is required of it.
if grep -qE '^\s*e\.reduced_precision = true;' "$src/memories/registry.cpp"; then
    line=$(grep -E '`mutable_state\(\)`' <<<"$section" | head -n 1)
    if [[ $line == *reduced_precision* && $line == *always* ]]; then echo "ok   mutable_state is required (reduced_precision)"
    else fail "docs/extending.md (In the tree) does not say mutable_state() is required of a table entry (reduced_precision)"; fi
fi

if [[ $failures -ne 0 ]]; then echo "$failures case(s) failed"; exit 1; fi
echo "all cases passed"
