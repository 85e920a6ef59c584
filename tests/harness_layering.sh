#!/bin/sh
# The harness stages include in one direction: cli -> experiments -> exec -> eval -> train -> results.
# Fails, naming the file and line, when a stage includes one that comes before it.
# usage: harness_layering.sh path/to/harness
h=$1
status=0
check() {  # check STAGE FORBIDDEN...
    stage=$1; shift
    for f in "$@"; do
        if grep -n "#include \"harness/$f/" "$h/$stage"/*.?pp; then
            echo "harness/$stage includes harness/$f (stages include only the ones after them)"; status=1
        fi
    done
}
check results train eval exec experiments cli
check train eval exec experiments cli
check eval exec experiments cli
check exec experiments cli
check experiments cli
exit $status
