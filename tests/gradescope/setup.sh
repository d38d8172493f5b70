#!/bin/sh
# setup.sh - Gradescope runs this once, as root, when it builds the autograder's image: it
# installs what grading needs and builds the course's side of the grader (the library, each
# lesson's judge, the sandbox), so that each submission only compiles the student's file.
# AUTOGRADER_ROOT stands in for /autograder (tests/grading/test_gradescope.sh uses it).
set -eu
root=${AUTOGRADER_ROOT:-/autograder}
cd "$root/source/course"
if ! command -v make >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "setup.sh: needs a C compiler and make (apt-get install build-essential)" >&2; exit 2; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q && apt-get install -y -q build-essential
fi
sh tests/ensure-deps.sh check   # Check and pkg-config: installed with apt-get when missing
sh tests/ensure-deps.sh grader  # libseccomp and bubblewrap
make -s grade-prereqs
echo "setup.sh: the grader is built in $(pwd)/build"
