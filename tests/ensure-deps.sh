#!/bin/sh
# ensure-deps.sh - makes sure a tool the course needs is installed, and says how if it is not.
#   tests/ensure-deps.sh check     the Check unit-test framework and pkg-config (for the tests)
#   tests/ensure-deps.sh gnuplot   gnuplot without X (for the plots)
#   tests/ensure-deps.sh grader    libseccomp and bubblewrap (for make grade: the sandbox)
#   tests/ensure-deps.sh linux     only that this is Linux, where the grader runs (grade.sh asks)
#   tests/ensure-deps.sh valgrind  valgrind (for make memcheck)
#   tests/ensure-deps.sh zip       zip and unzip (for make gradescope and its test)
#   tests/ensure-deps.sh openblas  OpenBLAS (optional: lesson 6's benchmark compares with it)
#   tests/ensure-deps.sh golden    Debian's python3 with numpy and PyTorch (for make golden;
#                                  PYTHON names the interpreter, /usr/bin/python3 by default)
# As root on Debian or Ubuntu it installs them with apt-get; otherwise it prints the command
# to run and fails.
what=${1:-check}
# The grader's sandbox is made of Linux's seccomp and namespaces: elsewhere there is nothing to
# install, only a Linux machine to grade on.
if [ "$what" = grader ] || [ "$what" = linux ]; then
    if [ "$(uname -s)" != Linux ]; then
        echo "the grader runs on Linux only (its sandbox is Linux's seccomp and namespaces), not on $(uname -s): grade on a Linux machine or on Gradescope" >&2
        exit 2
    fi
    [ "$what" = linux ] && exit 0
fi
case $what in
check)
    packages="check pkg-config"
    need="the Check framework and pkg-config"
    have_deps() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists check; }
    ;;
gnuplot)
    packages="gnuplot-nox"
    need="gnuplot"
    have_deps() { command -v gnuplot >/dev/null 2>&1; }
    ;;
grader)
    packages="libseccomp-dev bubblewrap"
    need="libseccomp (the grader's sandbox) and bubblewrap (its namespaces)"
    have_deps() { [ -f /usr/include/seccomp.h ] && command -v bwrap >/dev/null 2>&1; }
    ;;
valgrind)
    packages="valgrind"
    need="valgrind"
    have_deps() { command -v valgrind >/dev/null 2>&1; }
    ;;
zip)
    packages="zip unzip"
    need="zip and unzip"
    have_deps() { command -v zip >/dev/null 2>&1 && command -v unzip >/dev/null 2>&1; }
    ;;
openblas)
    packages="libopenblas-dev"
    need="OpenBLAS"
    # OpenBLAS itself, not any cblas.h: Debian's reference BLAS (libblas-dev) has one too, and a
    # program linked with -lopenblas that asks OpenBLAS for its threads is what the bench builds
    have_deps() {
        printf '#include <cblas.h>\nint main(void) { return openblas_get_num_threads() < 0; }\n' |
            ${CC:-cc} -x c - -lopenblas -o /dev/null >/dev/null 2>&1
    }
    ;;
golden)
    packages="python3-numpy python3-torch"
    need="python3 with numpy and PyTorch"
    have_deps() { "${PYTHON:-/usr/bin/python3}" -c 'import numpy, torch' >/dev/null 2>&1; }
    ;;
*)
    echo "ensure-deps.sh: unknown dependency '$what'" >&2
    exit 2
    ;;
esac

have_deps && exit 0
# Not root, with libseccomp but no bubblewrap: the sandbox builds and runs without namespaces
# (it then says so, and grades only where it may); recommend bubblewrap, do not require it.
if [ "$what" = grader ] && [ "$(id -u)" != 0 ] && [ -f /usr/include/seccomp.h ]; then
    echo "note: bubblewrap is missing, so the grader's sandbox has no namespaces (sudo apt-get install -y bubblewrap)" >&2
    exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "This needs $need, which is missing."
    echo "Installing: apt-get install -y $packages"
    export DEBIAN_FRONTEND=noninteractive
    # Try the package lists already on the machine first; refresh them only if that fails.
    if ! apt-get install -y -q $packages >/dev/null 2>&1; then
        apt-get update -q >/dev/null 2>&1
        apt-get install -y -q $packages >/dev/null 2>&1
    fi
    if have_deps; then
        echo "Installed $packages."
        exit 0
    fi
    echo "apt-get could not install them. Try by hand: apt-get update && apt-get install -y $packages" >&2
    exit 1
fi

echo "This needs $need, which is missing. Install it with:" >&2
if command -v apt-get >/dev/null 2>&1; then
    echo "    sudo apt-get install -y $packages" >&2
elif command -v dnf >/dev/null 2>&1; then
    [ "$what" = check ] && echo "    sudo dnf install -y check-devel pkgconf-pkg-config" >&2
    [ "$what" = gnuplot ] && echo "    sudo dnf install -y gnuplot" >&2
    [ "$what" = valgrind ] && echo "    sudo dnf install -y valgrind" >&2
    [ "$what" = openblas ] && echo "    sudo dnf install -y openblas-devel" >&2
    [ "$what" = golden ] && echo "    sudo dnf install -y python3-numpy python3-torch" >&2
    [ "$what" = grader ] && echo "    sudo dnf install -y libseccomp-devel bubblewrap" >&2
    [ "$what" = zip ] && echo "    sudo dnf install -y zip unzip" >&2
elif command -v brew >/dev/null 2>&1; then
    [ "$what" = check ] && echo "    brew install check pkg-config" >&2
    [ "$what" = gnuplot ] && echo "    brew install gnuplot" >&2
    [ "$what" = valgrind ] && echo "    (valgrind does not run on macOS: use make test SANITIZE=1)" >&2
    [ "$what" = openblas ] && echo "    brew install openblas" >&2
    [ "$what" = golden ] && echo "    python3 -m pip install numpy torch, then make golden PYTHON=python3" >&2
    [ "$what" = zip ] && echo "    brew install zip unzip" >&2
else
    echo "    sudo apt-get install -y $packages    (or your system's packages for $need)" >&2
fi
echo "then run make again." >&2
exit 1
