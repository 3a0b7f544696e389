/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T024423Z/raw/trace-profile-untraced-aa-close.perf.data -p 32136,32137
