#!/usr/bin/env bash
# One lent GPU call: install the carried wheels, record the machine, then run the parts of
# benchmarks/gpu_figures.sh in priority order, each under its own timeout, until BUDGET seconds are spent.
# Every part's output goes to a file under $OUT (8 files at most come back from a device call).
#
#   device:   PYTHONUNBUFFERED=1 OUT=... bash .whl/gpu_run.sh            (run from the repository root, wheels in .whl/)
#   dry run:  OUT=/tmp/dry PY3=.venv/bin/python BUDGET=3000 \
#             BENCH_EXTRA="--device cpu --config tiny --docs 2" bash benchmarks/gpu_run.sh
#
# The wheels (for a Python 3.12 image whose transformers is 5.x): transformers==4.57.6 tokenizers==0.22.2
# huggingface_hub==0.36.2 bert-score==0.3.13, fetched where pip works with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl <the four NAME==VERSION>
# and this script copied beside them (.whl/ is git-ignored locally).
# BENCH_EXTRA is appended to every neural_bench.py command line (argparse keeps the last value of a flag), so the
# dry run executes the same commands on the CPU with a tiny shape. WHEELS=none skips the install.
# Parts: base-bf16 (bf16 figures and CPU/GPU parity), base-fp32, the 131,072-token batches, tiny (bert-tiny shape
# with CPU-vs-GPU parity on the whole corpus), a fraction of a PENS-size end-to-end run (documents chosen from the
# time the 10-document end-to-end runs of base-bf16 took), then if time is left 16,384- and 32,768-token batches
# and --processes 1 and 2.
set -uo pipefail
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-gpu-run}
PY3=${PY3:-python3}
BUDGET=${BUDGET:-490}
BENCH_EXTRA=${BENCH_EXTRA:-}
WHEELS=${WHEELS:-.whl}
T0=$SECONDS
mkdir -p "$OUT"
LOG="$OUT/run.log"

say() { echo "$*" | tee -a "$LOG"; }
left() { echo $((BUDGET - (SECONDS - T0))); }

if [ "$WHEELS" != none ]; then
  $PY3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHEELS"/*.whl \
    || { say "wheel install failed"; exit 1; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

# neural_bench.py with BENCH_EXTRA appended (gpu_figures.sh calls "$PY benchmarks/neural_bench.py ...")
WRAP=$(mktemp /tmp/bench-py-XXXXXX.sh)
printf '#!/usr/bin/env bash\nexec %s "$@" %s\n' "$PY3" "$BENCH_EXTRA" >"$WRAP"
export PY="bash $WRAP"
B="$PY benchmarks/neural_bench.py --device cuda --compat-texts 0"

# part NAME CAP MIN FILE COMMAND...: run COMMAND under min(CAP, time left) seconds, appending to $OUT/FILE;
# skipped when fewer than MIN seconds are left.
part() {
  local name=$1 cap=$2 min=$3 file=$4 rest started rc
  shift 4
  rest=$(left)
  if [ "$rest" -lt "$min" ]; then
    say "### $name skipped: $rest s left, needs $min"
    return
  fi
  [ "$cap" -gt "$rest" ] && cap=$rest
  echo "### $name (timeout ${cap} s): $*" >>"$OUT/$file"
  started=$SECONDS
  timeout -k 10 "$cap" "$@" >>"$OUT/$file" 2>&1
  rc=$?
  say "### $name: exit $rc after $((SECONDS - started)) s ($(left) s left)$([ $rc -eq 124 ] && echo ', TIMED OUT')"
}

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  nproc
  $PY3 -c 'import sys, importlib.metadata as m, torch, transformers, bert_score
print("python", sys.version.split()[0], *(f"{n} {m.version(n)}" for n in ("torch", "transformers", "tokenizers",
      "huggingface_hub", "torchmetrics", "bert-score", "numpy", "scipy")),
      "tf32", torch.backends.cuda.matmul.allow_tf32, "threads", torch.get_num_threads())
print("transformers from", transformers.__file__, "bert_score from", bert_score.__file__)' 2>&1
  grep -m1 "model name" /proc/cpuinfo
  nvidia-smi 2>&1
} >"$OUT/env.txt"
cat "$OUT/env.txt"

# the card's bf16 matrix ceiling as measured (CUDA events, median of 20 after 5 warm-ups, random data): a square
# 8192 product, and BERT-base's FFN product at 65,536 tokens (65536 x 768 by 768 x 3072)
part ceiling 40 20 env.txt $PY3 - <<'EOF'
import torch
if torch.cuda.is_available():
    for m, k, n in ((8192, 8192, 8192), (65536, 768, 3072), (65536, 3072, 768)):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        times = []
        for i in range(25):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(); a @ b; end.record(); torch.cuda.synchronize()
            if i >= 5:
                times.append(start.elapsed_time(end) / 1e3)
        t = sorted(times)[len(times) // 2]
        print(f"bf16 matmul {m}x{k} @ {k}x{n}: median {t * 1e3:.3f} ms = {2 * m * k * n / t / 1e12:.0f} TFLOP/s")
else:
    print("no GPU: ceiling not measured")
EOF

part base-bf16 260 60 base-bf16.txt env OUT=/tmp/gpu-figures bash benchmarks/gpu_figures.sh base-bf16
part base-fp32 100 45 base-fp32.txt env OUT=/tmp/gpu-figures bash benchmarks/gpu_figures.sh base-fp32
part sweep-131072 55 35 sweep.txt $B --config base --dtype bfloat16 --measures infolm --subset-pairs 0 \
  --batch-tokens 131072
part tiny-fp32 90 30 tiny.txt $B --config tiny --dtype float32 --subset-pairs 2 --parity-docs 10
part tiny-bf16 30 15 tiny.txt $B --config tiny --dtype bfloat16 --subset-pairs 0

# a fraction of the PENS-size run: the largest of 384/192/96/48 documents whose predicted time fits (10-document
# end-to-end seconds of base-bf16, InfoLM plus BERTScore, scaled; 40 s for imports, models and the corpus)
t10=$(grep -h "end to end, 10 systems, cold cache" "$OUT/base-bf16.txt" 2>/dev/null \
      | sed 's/.*cold cache: \([0-9.]*\) s.*/\1/' | awk '{s += $1} END {print (NR == 2 ? s : 8)}')
docs=0
for n in 384 192 96 48; do
  need=$(awk -v t="$t10" -v n="$n" 'BEGIN {printf "%d", 40 + 0.03 * n + 1.3 * t * n / 10}')
  if [ "$need" -le "$(( $(left) - 5 ))" ]; then docs=$n; break; fi
done
say "### pens fraction: 10-document end to end ${t10} s; chose $docs documents"
if [ "$docs" -gt 0 ]; then
  part "pens-$docs" "$(left)" 40 pens-fraction.txt \
    $B --config base --dtype bfloat16 --docs "$docs" --end-to-end-only
fi

for t in 16384 32768; do
  part "sweep-$t" 55 40 sweep.txt $B --config base --dtype bfloat16 --measures infolm --subset-pairs 0 --batch-tokens $t
done
for n in 1 2; do
  part "processes-$n" 90 80 processes.txt $B --config base --dtype bfloat16 --docs 40 --processes $n \
    --process-start-delay 30
done

say "### done after $((SECONDS - T0)) s"
echo "=== summary"
grep -h -E "^###|encoding:|fraction of peak|utilisation|end to end|max \||PerSEval|same numbers|TFLOP/s|window|processes on one card|Error|error" \
  "$OUT"/*.txt | cut -c1-300
