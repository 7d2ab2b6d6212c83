#!/usr/bin/env bash
# The GPU figures of docs/guide/gpus.md (neural measures on one card), in the order they matter; each part's output goes to
# $OUT/<part>.txt as it runs. Usage: OUT=folder bash benchmarks/gpu_figures.sh [part ...]
# parts: base-bf16 base-fp32 sweep tiny processes pens-0 pens-1 (default: the first five; pens-* are the two halves
# of the PENS-size run, 3840 documents, each about ten minutes on an H100 with generating the corpus: 384 documents
# took 102 s end to end on 2026-11-26, so a half is near a lent machine's 10-minute limit per command).
set -uo pipefail
OUT=${OUT:-gpu-figures}
PY=${PY:-python3}
B="$PY benchmarks/neural_bench.py --device cuda --compat-texts 0"
mkdir -p "$OUT"
run() { local name=$1; shift; echo "### $name: $*"; "$@" 2>&1 | tee "$OUT/$name.txt"; }
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(base-bf16 base-fp32 sweep tiny processes)
for part in "${parts[@]}"; do
  case $part in
    base-bf16) run base-bf16 $B --config base --dtype bfloat16 --subset-pairs 2 --parity-docs 1 ;;
    base-fp32) run base-fp32 $B --config base --dtype float32 --subset-pairs 1 ;;
    sweep) for t in 16384 32768 131072; do
             run "sweep-$t" $B --config base --dtype bfloat16 --measures infolm --subset-pairs 0 --batch-tokens $t
           done ;;
    tiny) run tiny-fp32 $B --config tiny --dtype float32 --subset-pairs 2 --parity-docs 10
          run tiny-bf16 $B --config tiny --dtype bfloat16 --subset-pairs 0 ;;
    processes) for n in 1 2 4; do
                 run "processes-$n" $B --config base --dtype bfloat16 --docs 40 --processes $n --process-start-delay 40
               done ;;
    pens-0|pens-1) run "$part" $B --config base --dtype bfloat16 --docs 3840 --end-to-end-only --shard "${part#pens-}/2" ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
