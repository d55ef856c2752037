#!/usr/bin/env bash
# livecost.sh SIZE PAIRS [BINARY]: what a live view costs a run, as a user sees it.
#
# Alternates PAIRS times a plain `davinci-sim run` of hgemm SIZE³ (timing only) and the
# same run with --view inside a detached 80×24 tmux session, and prints for each pair the
# two runs' sim.wall_seconds (from report.json: the simulation alone, not the viewer's
# start or the wait for q) and their ratio, and the CPU time (user+sys, all threads) the
# view run took beyond the plain one; then the medians. This VM's speed drifts by ±25 %
# within seconds, so single ratios scatter; the extra CPU scatters less. Needs tmux and
# python3.
# BINARY defaults to a fresh build of ./cmd/davinci-sim. Run it from the repository root:
#
#	viz/livecost.sh 8192 10
set -euo pipefail
size=${1:?size}
pairs=${2:?pairs}
bin=${3:-}
tmp=$(mktemp -d)
trap 'tmux kill-session -t livecost 2>/dev/null || true; rm -rf "$tmp"' EXIT
if [ -z "$bin" ]; then
	bin=$tmp/davinci-sim
	go build -o "$bin" ./cmd/davinci-sim
fi
args=(run programs/examples/hgemm.yaml --numerics off --set "program.m=$size" --set "program.n=$size" --set "program.k=$size")
wall() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sim"]["wall_seconds"])' "$1/report.json"; }
# cpu FILE CMD...: runs CMD and writes its CPU seconds (user+sys, children included) to FILE.
cpu=(python3 -c 'import resource,subprocess,sys; subprocess.run(sys.argv[2:]); r=resource.getrusage(resource.RUSAGE_CHILDREN); open(sys.argv[1],"w").write("%.3f" % (r.ru_utime+r.ru_stime))')
ratios=()
extras=()
for i in $(seq 1 "$pairs"); do
	rm -rf "$tmp/plain" "$tmp/view"
	"${cpu[@]}" "$tmp/plain.cpu" "$bin" "${args[@]}" -q -o "$tmp/plain" >/dev/null
	tmux new-session -d -s livecost -x 80 -y 24 "$(printf '%q ' "${cpu[@]}" "$tmp/view.cpu" "$bin" "${args[@]}" --view -o "$tmp/view") >/dev/null 2>&1"
	# The header says "running" until the run ends; then q writes the report.
	for _ in $(seq 1 3000); do
		sleep 0.1
		tmux capture-pane -t livecost -p 2>/dev/null | head -1 | grep -q running || break
	done
	tmux send-keys -t livecost q
	for _ in $(seq 1 100); do [ -f "$tmp/view.cpu" ] && break; sleep 0.1; done
	p=$(wall "$tmp/plain")
	v=$(wall "$tmp/view")
	r=$(python3 -c "print('%.3f' % ($v / $p))")
	x=$(python3 -c "print('%.2f' % ($(cat "$tmp/view.cpu") - $(cat "$tmp/plain.cpu")))")
	ratios+=("$r")
	extras+=("$x")
	rm -f "$tmp/plain.cpu" "$tmp/view.cpu"
	printf 'pair %d: plain %.3f s, view %.3f s, ratio %s, view CPU +%s s\n' "$i" "$p" "$v" "$r" "$x"
	tmux kill-session -t livecost 2>/dev/null || true
done
med='import sys, statistics; r=sorted(float(x) for x in sys.stdin); print("%.3f (quartiles %.3f–%.3f)" % (statistics.median(r), r[len(r)//4], r[(3*len(r))//4]))'
echo "median ratio $(printf '%s\n' "${ratios[@]}" | python3 -c "$med")"
echo "median extra CPU $(printf '%s\n' "${extras[@]}" | python3 -c "$med") s"
