/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T024423Z/raw/trace-profile-traced-close.perf.data -p 32149,32150
