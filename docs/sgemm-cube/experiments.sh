#!/usr/bin/env bash
# Reproduces the SGEMM-cube comparison in docs/sgemm-cube.md (CSV files beside this script).
# Usage: docs/sgemm-cube/experiments.sh [accuracy|scaling|size-error|all]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=docs/sgemm-cube
bin=$(mktemp -d)/davinci-sim
go build -o "$bin" ./cmd/davinci-sim
ex=programs/examples/sgemm-cube.yaml
field() { python3 -c 'import json,sys
r=json.load(sys.stdin)
out=[]
for p in sys.argv[1:]:
    v=r
    for k in p.split("."):
        v=v.get(k) if isinstance(v,dict) else None
    out.append("" if v is None else str(v))
print(",".join(out))' "$@"; }

accuracy() { # Fig. 8: relative error vs offset exponent
  f=$out/accuracy-offset.csv
  echo "distribution,offset_exponent,accumulation,sb,rel_fro,hgemm_rel_fro,cpu_sgemm_fp32_rel_fro" > $f
  for dist in uniform uniform-nonneg; do for e in $(seq -20 2 10); do for acc in termwise elementwise; do for sb in 0 6 12; do
    tile=176; [ $acc = elementwise ] && tile=96   # elementwise keeps 3 FP32 tiles in L0C and UB
    row=$("$bin" run $ex --json --numerics full --set program.m=256 --set program.n=256 --set program.k=1024 \
      --set program.tiling.bm=$tile --set program.tiling.bn=$tile --set program.accumulation=$acc --set program.split.sb=$sb --set program.inputs.distribution=$dist \
      --set program.inputs.offset_exponent=$e | field error.rel_fro baselines.hgemm.rel_fro baselines.cpu_sgemm_fp32.rel_fro)
    echo "$dist,$e,$acc,$sb,$row" | tee -a $f
  done; done; done; done
}

scaling() { # Fig. 12: throughput vs size (timing only)
  f=$out/scaling.csv
  echo "m,n,k,buffering,tflops,peak_fraction" > $f
  for s in 2048 4096 6144 8192 12288 16384; do for buf in double single; do
    row=$("$bin" run $ex --json --numerics off --set program.m=$s --set program.n=$s --set program.k=8192 \
      --set program.buffering=$buf | field flops.tflops flops.peak_fraction)
    echo "$s,$s,8192,$buf,$row" | tee -a $f
  done; done
  for k in 2048 4096 16384 32768; do
    row=$("$bin" run $ex --json --numerics off --set program.m=8192 --set program.n=8192 --set program.k=$k | field flops.tflops flops.peak_fraction)
    echo "8192,8192,$k,double,$row" | tee -a $f
  done
}

size_error() { # Fig. 9: error vs m, n (k = 64·44) and vs k
  f=$out/accuracy-size.csv
  echo "m,n,k,rel_fro,hgemm_rel_fro,cpu_sgemm_fp32_rel_fro" > $f
  for s in 256 512 1024 2048; do
    row=$("$bin" run $ex --json --numerics sampled --set program.sample_tiles=4 --set program.m=$s --set program.n=$s --set program.k=2816 | field error.rel_fro baselines.hgemm.rel_fro baselines.cpu_sgemm_fp32.rel_fro)
    echo "$s,$s,2816,$row" | tee -a $f
  done
  for k in 256 1024 4096 16384; do
    row=$("$bin" run $ex --json --numerics sampled --set program.sample_tiles=4 --set program.m=512 --set program.n=512 --set program.k=$k | field error.rel_fro baselines.hgemm.rel_fro baselines.cpu_sgemm_fp32.rel_fro)
    echo "512,512,$k,$row" | tee -a $f
  done
}

case "${1:-all}" in
  accuracy) accuracy ;; scaling) scaling ;; size-error) size_error ;;
  all) accuracy; scaling; size_error ;;
  *) echo "usage: $0 [accuracy|scaling|size-error|all]" >&2; exit 2 ;;
esac
