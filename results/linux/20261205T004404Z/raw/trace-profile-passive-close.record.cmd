/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T004404Z/raw/trace-profile-passive-close.perf.data -p 4016,4017
