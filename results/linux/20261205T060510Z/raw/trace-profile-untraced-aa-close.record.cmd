/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T060510Z/raw/trace-profile-untraced-aa-close.perf.data -p 6082,6083
