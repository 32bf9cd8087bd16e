#!/bin/sh
# Installs the build to a fresh prefix and builds a C program against it the two ways users do, through
# `pkg-config --cflags --libs fusedquant` and through find_package(fusedquant), plus the C++ example through
# pkg-config; runs each. Exits 77 (skipped) only where pkg-config is not installed.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR LIBDIR CMAKE C_COMPILER CXX_COMPILER [FLAGS]
# FLAGS: added to every compile and link (the sanitizer of an FQ_SANITIZE build, whose runtime must come first).
set -eu
build=$1 src=$2 libdir=$3 cmake=$4 cc=$5 cxx=$6 flags=${7:-}
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "pkg-config is not installed (tools/setup-deps.sh installs it): skipped"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
export LD_LIBRARY_PATH="$prefix/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "pkg-config --cflags --libs fusedquant: $(pkg-config --cflags --libs fusedquant)"
test "$(pkg-config --variable=prefix fusedquant)" = "$prefix"

# shellcheck disable=SC2046,SC2086  # the flags are words
"$cc" -std=c99 -Wall -Werror $flags -o "$tmp/via-pkg-config" "$src/tests/install/consumer/consumer.c" \
    $(pkg-config --cflags --libs fusedquant)
printf 'through pkg-config: '
"$tmp/via-pkg-config"

# shellcheck disable=SC2046,SC2086  # the flags are words
"$cxx" -std=c++17 -Wall -Werror $flags -o "$tmp/quickstart-cpp" "$src/examples/quickstart.cpp" \
    $(pkg-config --cflags --libs fusedquant)
"$tmp/quickstart-cpp" >/dev/null
echo "examples/quickstart.cpp built with the installed fusedquant.hpp and ran"

"$cmake" -S "$src/tests/install/consumer" -B "$tmp/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
"$cmake" --build "$tmp/consumer-build" >/dev/null
printf 'through find_package: '
"$tmp/consumer-build/consumer"
