#!/usr/bin/env bash
# bench/colocated/shell_loop.sh: a shell loop of N short commands (default 1000), without and
# with the module's environment (LD_PRELOAD + its defaults), interleaved, R repeats; prints
# min/median/max seconds per loop and the ratio of medians.
#   bench/colocated/shell_loop.sh [BUILD_DIR] [N] [R]
set -euo pipefail
build=$(realpath "${1:-build}"); n=${2:-1000}; reps=${3:-5}
lib=$build/lib/libparwidth.so
loop='for ((i=0;i<'"$n"';i++)); do /bin/true; echo x | /usr/bin/cat >/dev/null; done'
declare -a plain mod
for ((r=0;r<reps;r++)); do
  t0=$(date +%s.%N); env -u LD_PRELOAD bash -c "$loop"; t1=$(date +%s.%N)
  LD_PRELOAD=$lib PARWIDTH_MODE=govern PARWIDTH_NODE=on bash -c "$loop"; t2=$(date +%s.%N)
  plain+=("$(echo "$t1 - $t0" | bc)"); mod+=("$(echo "$t2 - $t1" | bc)")
done
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "min %.3f  median %.3f  max %.3f", a[1], a[int((NR+1)/2)], a[NR]}'; }
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "shell loop of $n iterations (2 commands each: /bin/true, echo|cat), $reps repeats, seconds per loop"
echo "  without module: $(stats "${plain[@]}")"
echo "  with module:    $(stats "${mod[@]}")"
echo "  ratio of medians (with/without): $(echo "scale=3; $(med "${mod[@]}") / $(med "${plain[@]}")" | bc)"
