/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T225519Z/raw/profile-nginx.perf.data -p 30437,30438
