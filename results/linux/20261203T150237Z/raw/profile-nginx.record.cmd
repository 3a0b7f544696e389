/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T150237Z/raw/profile-nginx.perf.data -p 31279,31280
