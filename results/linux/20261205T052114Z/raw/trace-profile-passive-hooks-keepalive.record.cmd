/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T052114Z/raw/trace-profile-passive-hooks-keepalive.perf.data -p 19464,19465
