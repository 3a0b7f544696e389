/usr/bin/perf record -e cpu-clock -F 999 -g -o /work/main/results/linux/20261203T125825Z/raw/profile-nginx.perf.data -p 1061,1062
