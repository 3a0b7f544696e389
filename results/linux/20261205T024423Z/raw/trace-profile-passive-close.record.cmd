/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T024423Z/raw/trace-profile-passive-close.perf.data -p 32170,32171
