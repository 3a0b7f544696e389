/usr/bin/perf record -e cpu-clock -F 4999 -o /work/main/results/linux/20261205T052114Z/raw/trace-profile-traced-close.perf.data -p 21074,21075
