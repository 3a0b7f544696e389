/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T052114Z/raw/trace-profile-passive-close.perf.data -p 21095,21096
