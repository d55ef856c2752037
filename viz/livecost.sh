#!/usr/bin/env bash
# livecost.sh SIZE ROUNDS [BINARY...]: what a live view costs a run, as a user sees it.
#
# Each round runs a plain `davinci-sim run` of hgemm SIZE³ (timing only) with the first
# BINARY, then the same run with --view inside a detached 80×24 tmux session with each
# BINARY in turn, and prints each view run's sim.wall_seconds ratio to the plain run's
# (report.json: the simulation alone, not the viewer's start or the wait for q) and the
# CPU time (user+sys, all threads) it took beyond the plain run; then per BINARY the
# medians and quartiles. Several binaries compare builds in the same rounds (this VM's
# speed drifts by ±25 % within seconds, so only paired figures tell builds apart; the
# extra CPU scatters less than the wall ratio). PROGRAM=path.yaml runs that program
# instead of hgemm (SIZE is then ignored). BINARY defaults to a fresh build of
# ./cmd/davinci-sim. Needs tmux and python3. Run it from the repository root:
#
#	viz/livecost.sh 8192 16
#	PROGRAM=programs/examples/lu-fused-32k.yaml viz/livecost.sh 0 3 old-build new-build
set -euo pipefail
size=${1:?size}
rounds=${2:?rounds}
shift 2
tmp=$(mktemp -d)
trap 'tmux kill-session -t livecost 2>/dev/null || true; rm -rf "$tmp"' EXIT
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
	go build -o "$tmp/davinci-sim" ./cmd/davinci-sim
	bins=("$tmp/davinci-sim")
fi
if [ -n "${PROGRAM:-}" ]; then
	args=(run "$PROGRAM")
else
	args=(run programs/examples/hgemm.yaml --numerics off --set "program.m=$size" --set "program.n=$size" --set "program.k=$size")
fi
wall() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sim"]["wall_seconds"])' "$1/report.json"; }
# cpu FILE CMD...: runs CMD and writes its CPU seconds (user+sys, children included) to FILE.
cpu=(python3 -c 'import resource,subprocess,sys; subprocess.run(sys.argv[2:]); r=resource.getrusage(resource.RUSAGE_CHILDREN); open(sys.argv[1],"w").write("%.3f" % (r.ru_utime+r.ru_stime))')
: >"$tmp/results"
for i in $(seq 1 "$rounds"); do
	rm -rf "$tmp/plain" "$tmp"/*.cpu
	"${cpu[@]}" "$tmp/plain.cpu" "${bins[0]}" "${args[@]}" -q -o "$tmp/plain" >/dev/null
	p=$(wall "$tmp/plain")
	line=$(printf 'round %d: plain %.3f s' "$i" "$p")
	for k in "${!bins[@]}"; do
		rm -rf "$tmp/view" "$tmp/view.cpu"
		tmux new-session -d -s livecost -x 80 -y 24 "$(printf '%q ' "${cpu[@]}" "$tmp/view.cpu" "${bins[$k]}" "${args[@]}" --view -o "$tmp/view") >/dev/null 2>&1"
		# Once the view has drawn, its header says "running" until the run ends; then
		# q writes the report.
		for _ in $(seq 1 600); do
			sleep 0.1
			tmux capture-pane -t livecost -p 2>/dev/null | head -1 | grep -q '[^ ]' && break
		done
		for _ in $(seq 1 36000); do
			tmux capture-pane -t livecost -p 2>/dev/null | head -1 | grep -q running || break
			sleep 0.1
		done
		tmux send-keys -t livecost q
		for _ in $(seq 1 600); do [ -f "$tmp/view.cpu" ] && break; sleep 0.1; done
		tmux kill-session -t livecost 2>/dev/null || true
		v=$(wall "$tmp/view")
		r=$(python3 -c "print('%.3f' % ($v / $p))")
		x=$(python3 -c "print('%.2f' % ($(cat "$tmp/view.cpu") - $(cat "$tmp/plain.cpu")))")
		echo "$k $r $x" >>"$tmp/results"
		line+=$(printf ', [%d] view %.3f s ratio %s CPU +%s s' "$k" "$v" "$r" "$x")
	done
	echo "$line"
done
python3 - "$tmp/results" "${bins[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for k, name in enumerate(sys.argv[2:]):
    def q(col):
        v = sorted(float(r[col]) for r in rows if int(r[0]) == k)
        return "%.3f (quartiles %.3f–%.3f)" % (statistics.median(v), v[len(v) // 4], v[(3 * len(v)) // 4])
    print("[%d] %s: median ratio %s, median extra CPU %s s" % (k, name, q(1), q(2)))
EOF
