#!/usr/bin/env bash
# Lent-GPU calls for docs/guide/gpus.md: install the carried wheels, record the machine, then run the parts named
# (default: quick), each under its own timeout, until BUDGET seconds are spent. Outputs go to $OUT (8 files at most
# come back from a device call).
#
#   device:   PYTHONUNBUFFERED=1 OUT=... bash benchmarks/gpu_run.sh quick      (repository root, wheels in .whl/)
#             PYTHONUNBUFFERED=1 OUT=... BUDGET=580 bash benchmarks/gpu_run.sh pens
#   dry run:  OUT=/tmp/dry PY3=.venv/bin/python WHEELS=none BUDGET=3000 \
#             BENCH_EXTRA="--device cpu --config tiny" PENS_DOCS=4 bash benchmarks/gpu_run.sh quick pens
#
# Parts:
#   quick: the card's matrix ceiling; InfoLM + BERTScore on QUICK_DOCS = 10 documents of the BERT-base shape in bf16
#          with the eager step (the share of the peak, GPU utilisation), and the bf16 precision check (float32 vs
#          bf16 vs bf16 with recheck=auto) on PRECISION_DOCS documents;
#   compiled: InfoLM on QUICK_DOCS documents with the compiled step (compiling included in the warm-up line);
#   pens:  the PENS-size run end to end (PENS_DOCS = 3840 documents, InfoLM + BERTScore, bf16, compiled step,
#          recheck=flag: the bf16 error measured in float32 on a sample of documents), printing progress lines so a
#          run cut by the time limit still tells its rate.
# The wheels (for the device's Python 3.12, whose transformers is 5.x): transformers==4.57.6 tokenizers==0.22.2
# huggingface_hub==0.36.2 bert-score==0.3.13, fetched where pip works with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl <the four NAME==VERSION>
# (.whl/ is ignored locally; name it in the device call's carry). BENCH_EXTRA is appended to every neural_bench.py
# command line (argparse keeps the last value of a flag), so the dry run executes the same commands on the CPU.
set -uo pipefail
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-gpu-run}
PY3=${PY3:-python3}
BUDGET=${BUDGET:-290}
BENCH_EXTRA=${BENCH_EXTRA:-}
WHEELS=${WHEELS:-.whl}
PENS_DOCS=${PENS_DOCS:-3840}
PRECISION_DOCS=${PRECISION_DOCS:-6}
QUICK_DOCS=${QUICK_DOCS:-10}
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

WRAP=$(mktemp /tmp/bench-py-XXXXXX.sh)
printf '#!/usr/bin/env bash\nexec %s "$@" %s\n' "$PY3" "$BENCH_EXTRA" >"$WRAP"
B="bash $WRAP benchmarks/neural_bench.py --device cuda --compat-texts 0"

# part NAME CAP MIN FILE COMMAND...: COMMAND under min(CAP, time left) seconds, appended to $OUT/FILE; skipped
# when fewer than MIN seconds are left.
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
  $PY3 -c 'import sys, importlib.metadata as m, torch
def version(name):
    try:
        return m.version(name)
    except m.PackageNotFoundError:
        return "absent"
print("python", sys.version.split()[0], *(f"{n} {version(n)}" for n in ("torch", "transformers", "tokenizers",
      "huggingface_hub", "bert-score", "triton", "numpy")), "tf32", torch.backends.cuda.matmul.allow_tf32,
      "threads", torch.get_num_threads())' 2>&1
  grep -m1 "model name" /proc/cpuinfo
  df -h /tmp | tail -1
} >"$OUT/env.txt"
cat "$OUT/env.txt"

for what in "${@:-quick}"; do
  case $what in
    quick)
      # the card's bf16 matrix ceiling (CUDA events, median of 20 after 5 warm-ups, random data): a square 8192
      # product and BERT-base's FFN products at 65,536 tokens
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
      part base-bf16-eager 70 30 base-bf16.txt $B --config base --dtype bfloat16 --docs "$QUICK_DOCS" --subset-pairs 0 \
        --compile off
      part precision 90 40 precision.txt $B --config base --dtype bfloat16 --docs "$PRECISION_DOCS" --compile off \
        --precision-check
      ;;
    compiled)
      part base-bf16-compiled 150 60 base-bf16.txt $B --config base --dtype bfloat16 --docs "$QUICK_DOCS" \
        --subset-pairs 0 --compile on --measures infolm
      ;;
    pens)
      part "pens-$PENS_DOCS" "$(left)" 60 pens.txt $B --config base --dtype bfloat16 --docs "$PENS_DOCS" \
        --end-to-end-only --recheck flag --progress-every 20
      ;;
    *) say "unknown part $what"; exit 2 ;;
  esac
done

say "### done after $((SECONDS - T0)) s"
echo "=== summary"
grep -h -E "^###|step:|encoding:|fraction of peak|utilisation|end to end|PerSEval|TFLOP/s|low precision|check:|order|progress|Error|error|FAILED" \
  "$OUT"/*.txt | cut -c1-300
