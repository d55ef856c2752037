#!/bin/bash
# Reproduces the lu-fused figures of docs/lu-fused.md (timing only; run from
# the repository root). Writes docs/lu-fused/*.txt.
set -e
out=docs/lu-fused
sim="go run ./cmd/davinci-sim"
go build -o /tmp/davinci-sim ./cmd/davinci-sim && sim=/tmp/davinci-sim
# Roofline of the trailing-update operator (8192² trailing matrix, FP32).
echo "operator tflops flop_per_gm_byte" > $out/roofline.txt
for f in lu-gemm128 lu-gemm256 lu-gemm512 lu-gemm256-fusion; do
  $sim run programs/examples/$f.yaml --json -q | python3 -c "
import json,sys;r=json.load(sys.stdin);print('$f', round(r['flops']['tflops'],2), round(r['memory']['operational_intensity'],1))" >> $out/roofline.txt
done
# LU vs nb and n_fusion, n = 16384 (n_fused 6; 3 for nb 512, the most that fits L1).
echo "nb n_fused n_fusion tflops fact_tflops total_s fact_s wall" > $out/sweep-n16384.txt
for nb in 128 256 512; do
  F=6; [ $nb = 512 ] && F=3
  for nf in 16 20 24 28 32 0; do
    f=lu-fused-32k; fused=$F
    [ $nf = 0 ] && f=lu-nofusion-32k && fused=1
    $sim run programs/examples/$f.yaml --set program.n=16384 --set program.nb=$nb --set program.n_fused=$fused \
        --set program.n_fusion=$nf --json -q | python3 -c "
import json,sys;r=json.load(sys.stdin);h=r['hplmxp']
print($nb,$fused,$nf,round(h['tflops'],2),round(h['factorization_tflops'],2),round(h['total_seconds'],5),round(h['factorization_seconds'],5),round(r['sim']['wall_seconds'],1))" >> $out/sweep-n16384.txt
  done
done
# Whole HPL-MxP with and without fusion at n = 32768.
for f in lu-fused-32k lu-nofusion-32k; do
  $sim run programs/examples/$f.yaml --json -q > /tmp/$f.json
done
python3 - > $out/fusion-n32768.txt <<'PY'
import json
a=json.load(open('/tmp/lu-fused-32k.json'))['hplmxp']; b=json.load(open('/tmp/lu-nofusion-32k.json'))['hplmxp']
for k in ('factorization_seconds','total_seconds','factorization_tflops','tflops'):
    print(k, 'fusion', round(a[k],5), 'no-fusion', round(b[k],5))
print('run-time ratio (no fusion / fusion): factorization', round(b['factorization_seconds']/a['factorization_seconds'],3),
      'whole solve', round(b['total_seconds']/a['total_seconds'],3))
PY
cat $out/*.txt
