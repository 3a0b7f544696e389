/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T150237Z/raw/profile-bare.perf.data -p 31262,31263
