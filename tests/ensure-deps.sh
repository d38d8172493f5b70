#!/bin/sh
# ensure-deps.sh - makes sure what the tests need is installed: the Check unit-test framework,
# found through pkg-config. As root on Debian or Ubuntu it installs them with apt-get;
# otherwise it prints the command to run and fails.
packages="check pkg-config"

have_deps() {
    command -v pkg-config >/dev/null 2>&1 && pkg-config --exists check
}

have_deps && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "The tests need the Check framework and pkg-config, which are missing."
    echo "Installing them: apt-get install -y $packages"
    export DEBIAN_FRONTEND=noninteractive
    # Try the package lists already on the machine first; refresh them only if that fails.
    if ! apt-get install -y -q $packages >/dev/null 2>&1; then
        apt-get update -q >/dev/null 2>&1
        apt-get install -y -q $packages >/dev/null 2>&1
    fi
    if have_deps; then
        echo "Installed: check $(pkg-config --modversion check)."
        exit 0
    fi
    echo "apt-get could not install them. Try by hand: apt-get update && apt-get install -y $packages" >&2
    exit 1
fi

echo "The tests need the Check framework and pkg-config, which are missing. Install them with:" >&2
if command -v apt-get >/dev/null 2>&1; then
    echo "    sudo apt-get install -y $packages" >&2
elif command -v dnf >/dev/null 2>&1; then
    echo "    sudo dnf install -y check-devel pkgconf-pkg-config" >&2
elif command -v brew >/dev/null 2>&1; then
    echo "    brew install check pkg-config" >&2
else
    echo "    sudo apt-get install -y $packages    (or your system's packages for Check and pkg-config)" >&2
fi
echo "then run make again." >&2
exit 1
