/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T225519Z/raw/profile-bare.perf.data -p 30420,30421
