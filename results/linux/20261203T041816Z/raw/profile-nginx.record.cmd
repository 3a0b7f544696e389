/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T041816Z/raw/profile-nginx.perf.data -p 32249,32250
