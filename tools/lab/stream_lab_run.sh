#!/usr/bin/env bash
# One device call (tools/lab): the stages named in $1 of tools/gpu-check.sh, then everything under $OUT as one
# tarball (the device returns at most 8 files).
R=$OUT; export OUT=/tmp/o; mkdir -p /tmp/o
timeout ${FQ_LAB_TIMEOUT:-550} tools/gpu-check.sh "$1"
tar czf $R/o.tgz -C /tmp/o .
