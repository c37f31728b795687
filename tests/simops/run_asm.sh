#!/bin/sh
# run_asm.sh <tpb> <workdir> <engine> <file.s> [tpb sim options...]
# Assemble one engine stream into a minimal artifact directory (no tensors)
# and simulate it; prints tpb sim's output and exits with its status.
set -u
tpb=$1 work=$2 engine=$3 src=$4
shift 4
rm -rf "$work"
mkdir -p "$work/art/nc0/sg0" || exit 2
"$tpb" as "$src" -o "$work/art/nc0/sg0/$engine.bin" --engine "$engine" || exit 2
printf '{"format":"tpbsim-tensor-map","version":1,"kernel":"simops","target":"trn2","num_cores":1,"hbm_bytes":4096,"tensors":[]}\n' \
    > "$work/art/tensor-map.json"
printf '{"core":0,"semaphores":[],"queues":[]}\n' > "$work/art/nc0/sg0/def.json"
"$tpb" sim "$work/art" -o "$work/out" "$@" 2>&1
