#!/usr/bin/env bash
# livecost.sh SIZE PAIRS [BINARY]: what a live view costs a run, as a user sees it.
#
# Alternates PAIRS times a plain `davinci-sim run` of hgemm SIZE³ (timing only) and the
# same run with --view inside a detached 80×24 tmux session, and prints for each pair the
# two runs' sim.wall_seconds (from report.json: the simulation alone, not the viewer's
# start or the wait for q) and their ratio, then the median ratio. Needs tmux and python3.
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
ratios=()
for i in $(seq 1 "$pairs"); do
	rm -rf "$tmp/plain" "$tmp/view"
	"$bin" "${args[@]}" -q -o "$tmp/plain" >/dev/null
	tmux new-session -d -s livecost -x 80 -y 24 "$(printf '%q ' "$bin" "${args[@]}" --view -o "$tmp/view") >/dev/null 2>&1"
	# The header says "running" until the run ends; then q writes the report.
	for _ in $(seq 1 3000); do
		sleep 0.1
		tmux capture-pane -t livecost -p 2>/dev/null | head -1 | grep -q running || break
	done
	tmux send-keys -t livecost q
	for _ in $(seq 1 100); do [ -f "$tmp/view/report.json" ] && break; sleep 0.1; done
	p=$(wall "$tmp/plain")
	v=$(wall "$tmp/view")
	r=$(python3 -c "print('%.3f' % ($v / $p))")
	ratios+=("$r")
	printf 'pair %d: plain %.3f s, view %.3f s, ratio %s\n' "$i" "$p" "$v" "$r"
	tmux kill-session -t livecost 2>/dev/null || true
done
printf '%s\n' "${ratios[@]}" | sort -n | python3 -c 'import sys; r=[float(x) for x in sys.stdin]; print("median ratio %.3f (min %.3f, max %.3f)" % (r[len(r)//2] if len(r)%2 else (r[len(r)//2-1]+r[len(r)//2])/2, r[0], r[-1]))'
