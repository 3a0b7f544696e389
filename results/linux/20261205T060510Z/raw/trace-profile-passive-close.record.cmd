/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T060510Z/raw/trace-profile-passive-close.perf.data -p 6116,6117
