/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T004404Z/raw/trace-profile-untraced-aa-close.perf.data -p 3982,3983
