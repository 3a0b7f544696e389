/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T052114Z/raw/trace-profile-traced-keepalive.perf.data -p 19423,19424
